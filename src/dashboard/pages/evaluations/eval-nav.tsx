// The two lists of Evaluations, test runs and datasets, and the way out of the nested routes.

import { Link, useLocation } from "wouter";

/** A path of the dashboard outside Evaluations (its routes are nested under /evaluations). */
export function dashboardPath(path: string): string {
  return `~/ui${path}`;
}

/** The trace page of a trace id. */
export function tracePath(traceId: string): string {
  return dashboardPath(`/traces/${encodeURIComponent(traceId)}`);
}

export function EvalNav() {
  const [location] = useLocation();
  const links = [
    { href: "/", label: "Test runs", current: location === "/" },
    { href: "/datasets", label: "Datasets", current: location.startsWith("/datasets") },
  ];
  return (
    <nav className="eval-nav" aria-label="Evaluations">
      <ul>
        {links.map((link) => (
          <li key={link.href}>
            <Link href={link.href} aria-current={link.current ? "page" : undefined}>
              {link.label}
            </Link>
          </li>
        ))}
      </ul>
    </nav>
  );
}
