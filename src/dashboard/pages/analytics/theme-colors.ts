// The colours a canvas chart draws with, read from the theme's custom properties as the page
// computes them, and read again when the theme changes (the reader's choice on the root element,
// or the system's light or dark when the choice is "system").

import { type RefObject, useEffect, useState } from "react";
import { type SeriesColor, seriesColors } from "./chart-data.js";

export interface ChartColors {
  readonly text: string;
  readonly muted: string;
  readonly grid: string;
  readonly background: string;
  readonly font: string;
  readonly series: Readonly<Record<SeriesColor, string>>;
}

const read = (element: HTMLElement): ChartColors => {
  // A probe resolves var() and color-mix() to a colour the canvas takes.
  const probe = document.createElement("span");
  probe.hidden = true;
  element.append(probe);
  const resolve = (property: string) => {
    probe.style.color = `var(${property})`;
    return getComputedStyle(probe).color;
  };
  const style = getComputedStyle(element);
  const colors: ChartColors = {
    text: resolve("--cairn-fg"),
    muted: resolve("--cairn-muted"),
    grid: resolve("--cairn-border"),
    background: resolve("--cairn-bg"),
    font: style.fontFamily,
    series: Object.fromEntries(
      [...seriesColors, "--cairn-danger"].map((name) => [name, resolve(name)]),
    ) as Record<SeriesColor, string>,
  };
  probe.remove();
  return colors;
};

/** The chart colours under `element`, anew on each change of theme. */
export function useChartColors(element: RefObject<HTMLElement | null>): ChartColors | undefined {
  const [colors, setColors] = useState<ChartColors>();
  useEffect(() => {
    const target = element.current;
    if (target === null) return undefined;
    const update = () => {
      const next = read(target);
      setColors((current) =>
        current !== undefined && JSON.stringify(current) === JSON.stringify(next) ? current : next,
      );
    };
    update();
    const observer = new MutationObserver(update);
    observer.observe(document.documentElement, {
      attributes: true,
      attributeFilter: ["data-cairn-theme", "class", "style"],
    });
    const scheme = matchMedia("(prefers-color-scheme: dark)");
    scheme.addEventListener("change", update);
    return () => {
      observer.disconnect();
      scheme.removeEventListener("change", update);
    };
  }, [element]);
  return colors;
}
