// One chart of the analytics page: lines over time drawn by uPlot on a canvas in the theme's
// colours, a tooltip under the mouse and under the arrow keys (read out as well), a legend in
// text, and the same numbers as a table: hidden for screen readers, or shown by the Table toggle.

import { type KeyboardEvent, type ReactNode, useEffect, useId, useRef, useState } from "react";
import uPlot from "uplot";
import "uplot/dist/uPlot.min.css";
import type { AnalyticsInterval } from "../../../core/wire/analytics.js";
import type { ChartModel } from "./chart-data.js";
import { ScrollingTable } from "./scrolling-table.js";
import type { ChartColors } from "./theme-colors.js";

const plotHeight = 220;

/** Steps between the marks of a count's axis: whole numbers only. */
const wholeSteps = Array.from({ length: 10 }, (_, power) =>
  [1, 2, 5].map((step) => step * 10 ** power),
).flat();

const dayLabel = new Intl.DateTimeFormat("en", {
  month: "short",
  day: "numeric",
  year: "numeric",
  timeZone: "UTC",
});
const hourLabel = new Intl.DateTimeFormat("en", {
  month: "short",
  day: "numeric",
  hour: "2-digit",
  minute: "2-digit",
  hourCycle: "h23",
  timeZone: "UTC",
});

const dayTick = new Intl.DateTimeFormat("en", { month: "short", day: "numeric", timeZone: "UTC" });
const hourTick = new Intl.DateTimeFormat("en", {
  hour: "2-digit",
  minute: "2-digit",
  hourCycle: "h23",
  timeZone: "UTC",
});

/** A mark of the time axis: the day, or the hour (the day at midnight), in UTC. */
function timeTick(seconds: number, interval: AnalyticsInterval): string {
  const time = seconds * 1000;
  if (interval === "hour" && time % 86_400_000 !== 0) return hourTick.format(time);
  return dayTick.format(time);
}

/** A bucket as the tooltip and the table name it: "Nov 20, 2026" or "Nov 20, 14:00". */
export function bucketLabel(time: number, interval: AnalyticsInterval): string {
  return (interval === "hour" ? hourLabel : dayLabel).format(time);
}

export function TimeChart(props: {
  model: ChartModel;
  colors: ChartColors | undefined;
  interval: AnalyticsInterval;
  showTable: boolean;
  onShowTable: (show: boolean) => void;
  /** Controls beside the title (the latency chart's percentile). */
  controls?: ReactNode;
}) {
  const { model, colors, interval, showTable } = props;
  const titleId = useId();
  const descriptionId = useId();
  const container = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);
  const [selected, setSelected] = useState<number | null>(null);
  const shownIndex = Math.min(selected ?? model.times.length - 1, model.times.length - 1);
  const unit = interval === "hour" ? "hour" : "day";

  const describe = (index: number): string => {
    const time = model.times[index] ?? 0;
    const values = model.series.map((line) => {
      const value = line.values[index];
      return `${line.label} ${value === null || value === undefined ? "no data" : model.format(value)}`;
    });
    return `${bucketLabel(time, interval)}: ${values.join(", ")}`;
  };

  useEffect(() => {
    const target = container.current;
    if (target === null || colors === undefined || showTable) return undefined;
    const tooltip = document.createElement("div");
    tooltip.className = "analytics-tooltip";
    tooltip.hidden = true;
    const font = `12px ${colors.font}`;
    const axis = {
      stroke: colors.muted,
      font,
      grid: { stroke: colors.grid, width: 1 },
      ticks: { stroke: colors.grid, width: 1 },
    };
    const options: uPlot.Options = {
      width: Math.max(200, target.clientWidth),
      height: plotHeight,
      tzDate: (seconds) => uPlot.tzDate(new Date(seconds * 1000), "Etc/UTC"),
      legend: { show: false },
      cursor: { drag: { x: false, y: false, setScale: false }, points: { size: 8 } },
      scales: {
        x: { time: true },
        y: { range: (_plot, _min, max) => [0, max > 0 ? max * 1.1 : 1] },
      },
      axes: [
        { ...axis, values: (_plot, splits) => splits.map((value) => timeTick(value, interval)) },
        {
          ...axis,
          size: 72,
          ...(model.whole === true ? { incrs: wholeSteps } : {}),
          values: (_plot, splits) =>
            splits.map((value) => (value === 0 ? "0" : model.format(value))),
        },
      ],
      series: [
        {},
        ...model.series.map((line) => ({
          label: line.label,
          stroke: colors.series[line.color],
          width: 2,
          dash: [...line.dash],
          spanGaps: false,
          points: { show: true, size: 5, fill: colors.series[line.color] },
        })),
      ],
      hooks: {
        setCursor: [(self) => showTooltip(self, tooltip, self.cursor.idx, model, interval, colors)],
      },
    };
    const data: uPlot.AlignedData = [
      model.times.map((time) => time / 1000),
      ...model.series.map((line) => [...line.values]),
    ];
    const created = new uPlot(options, data, target);
    created.over.append(tooltip);
    plot.current = created;
    let width = target.clientWidth;
    const resize = new ResizeObserver(() => {
      if (target.clientWidth === width) return;
      width = target.clientWidth;
      created.setSize({ width: Math.max(200, width), height: plotHeight });
    });
    resize.observe(target);
    return () => {
      resize.disconnect();
      plot.current = null;
      created.destroy();
    };
  }, [model, colors, interval, showTable]);

  const moveTo = (index: number) => {
    const current = plot.current;
    const time = model.times[index];
    if (current === null || time === undefined) return;
    current.setCursor({
      left: current.valToPos(time / 1000, "x"),
      top: current.over.clientHeight / 2,
    });
    setSelected(index);
  };

  const onKeyDown = (event: KeyboardEvent) => {
    const last = model.times.length - 1;
    const at = selected;
    const next =
      event.key === "ArrowRight"
        ? Math.min(last, at === null ? last : at + 1)
        : event.key === "ArrowLeft"
          ? Math.max(0, at === null ? last : at - 1)
          : event.key === "Home"
            ? 0
            : event.key === "End"
              ? last
              : undefined;
    if (next === undefined || last < 0) return;
    event.preventDefault();
    moveTo(next);
  };

  const hide = () => plot.current?.setCursor({ left: -10, top: -10 });

  return (
    <section className="analytics-chart" aria-labelledby={titleId}>
      <div className="analytics-chart-header">
        <h2 id={titleId}>{model.title}</h2>
        <div className="dash-actions">
          {props.controls}
          <button
            type="button"
            className="dash-button"
            aria-pressed={showTable}
            aria-label={`${model.title} as a table`}
            onClick={() => props.onShowTable(!showTable)}
          >
            Table
          </button>
        </div>
      </div>
      <p className="dash-muted analytics-chart-description" id={descriptionId}>
        {model.description}
      </p>
      {showTable ? null : (
        <>
          {/* The arrow keys move a cursor along the buckets, as on a slider: its value is the
              bucket under the cursor and its figures, which a screen reader reads out. */}
          <div
            ref={container}
            className="analytics-plot"
            role="slider"
            aria-label={`${model.title} by ${unit}`}
            aria-describedby={descriptionId}
            aria-valuemin={0}
            aria-valuemax={Math.max(0, model.times.length - 1)}
            aria-valuenow={shownIndex}
            aria-valuetext={model.times.length === 0 ? "no data" : describe(shownIndex)}
            tabIndex={0}
            onKeyDown={onKeyDown}
            onFocus={() => moveTo(selected ?? model.times.length - 1)}
            onBlur={hide}
          />
          <ul className="analytics-legend" aria-label={`${model.title} legend`}>
            {model.series.map((line) => (
              <li key={line.label}>
                <svg width="28" height="10" aria-hidden="true" focusable="false">
                  <line
                    x1="1"
                    y1="5"
                    x2="27"
                    y2="5"
                    style={{ stroke: `var(${line.color})` }}
                    strokeWidth="2.5"
                    strokeDasharray={line.dash.length === 0 ? undefined : line.dash.join(" ")}
                  />
                </svg>
                <span className="analytics-legend-label">{line.label}</span>
                <span className="dash-muted">{line.summary}</span>
              </li>
            ))}
          </ul>
        </>
      )}
      <ChartTable model={model} interval={interval} shown={showTable} />
    </section>
  );
}

/** The chart's numbers: every bucket a row, every line a column (and all groups together). */
function ChartTable(props: { model: ChartModel; interval: AnalyticsInterval; shown: boolean }) {
  const { model, interval, shown } = props;
  const cell = (value: number | null | undefined) =>
    value === null || value === undefined ? "—" : model.format(value);
  const table = (
    <table className="dash-table analytics-table">
      <caption className="cairn-visually-hidden">
        {model.title} per {interval === "hour" ? "hour" : "day"} (UTC)
      </caption>
      <thead>
        <tr>
          <th scope="col">{interval === "hour" ? "Hour (UTC)" : "Day (UTC)"}</th>
          {model.series.map((line) => (
            <th scope="col" className="dash-num" key={line.label}>
              {line.label}
            </th>
          ))}
          {model.all === undefined ? null : (
            <th scope="col" className="dash-num">
              All
            </th>
          )}
        </tr>
      </thead>
      <tbody>
        {model.times.map((time, index) => (
          <tr key={time}>
            <th scope="row">{bucketLabel(time, interval)}</th>
            {model.series.map((line) => (
              <td className="dash-num" key={line.label}>
                {cell(line.values[index])}
              </td>
            ))}
            {model.all === undefined ? null : (
              <td className="dash-num">{cell(model.all[index])}</td>
            )}
          </tr>
        ))}
      </tbody>
    </table>
  );
  if (!shown) return <div className="cairn-visually-hidden">{table}</div>;
  return <ScrollingTable label={`${model.title} table`}>{table}</ScrollingTable>;
}

function showTooltip(
  plot: uPlot,
  tooltip: HTMLElement,
  index: number | null | undefined,
  model: ChartModel,
  interval: AnalyticsInterval,
  colors: ChartColors,
): void {
  const time = index === null || index === undefined ? undefined : model.times[index];
  if (index === null || index === undefined || time === undefined) {
    tooltip.hidden = true;
    return;
  }
  const title = document.createElement("div");
  title.className = "analytics-tooltip-title";
  title.textContent = bucketLabel(time, interval);
  const rows = model.series.map((line) => {
    const row = document.createElement("div");
    const swatch = document.createElement("span");
    swatch.className = "analytics-swatch";
    swatch.style.background = colors.series[line.color];
    const value = line.values[index];
    row.append(
      swatch,
      `${line.label}: ${value === null || value === undefined ? "no data" : model.format(value)}`,
    );
    return row;
  });
  tooltip.replaceChildren(title, ...rows);
  tooltip.hidden = false;
  const left = plot.valToPos(time / 1000, "x");
  const width = plot.over.clientWidth;
  // On the right half the tooltip stands left of the cursor, so it stays inside the chart.
  if (left > width / 2) {
    tooltip.style.left = "";
    tooltip.style.right = `${width - left + 12}px`;
  } else {
    tooltip.style.right = "";
    tooltip.style.left = `${left + 12}px`;
  }
}
