// The signed-in frame: a skip link, the navigation, the project's name, the theme and sign out,
// and the page in <main>.

import type { ReactNode } from "react";
import { Link, useLocation } from "wouter";
import { useSession } from "../api/session.js";
import { type ThemeChoice, useTheme } from "./theme.js";

export const sections = [
  { path: "/traces", label: "Traces" },
  { path: "/sessions", label: "Sessions" },
  { path: "/evaluations", label: "Evaluations" },
  { path: "/versions", label: "Versions" },
  { path: "/analytics", label: "Analytics" },
  { path: "/sandboxes", label: "Sandboxes" },
] as const;

export function Shell(props: { children: ReactNode; onSignOut: () => void }) {
  const session = useSession();
  const [location] = useLocation();
  const [theme, setTheme] = useTheme();
  return (
    <div className="dash-shell">
      <a className="dash-skip" href="#main">
        Skip to content
      </a>
      <header className="dash-topbar">
        <span className="dash-brand">Cairn</span>
        <span className="dash-project" title={session.project.id}>
          {session.project.name}
        </span>
        <div className="dash-topbar-end">
          <label className="dash-theme">
            <span>Theme</span>
            <select
              value={theme}
              onChange={(event) => setTheme(event.currentTarget.value as ThemeChoice)}
            >
              <option value="system">System</option>
              <option value="light">Light</option>
              <option value="dark">Dark</option>
            </select>
          </label>
          <button type="button" className="dash-button" onClick={props.onSignOut}>
            Sign out
          </button>
        </div>
      </header>
      <nav className="dash-nav" aria-label="Sections">
        <ul>
          {sections.map((section) => {
            const current = location === section.path || location.startsWith(`${section.path}/`);
            return (
              <li key={section.path}>
                <Link href={section.path} aria-current={current ? "page" : undefined}>
                  {section.label}
                </Link>
              </li>
            );
          })}
        </ul>
      </nav>
      <main id="main" className="dash-main" tabIndex={-1}>
        {props.children}
      </main>
    </div>
  );
}
