import { type KeyboardEvent, useEffect, useRef } from "react";

export interface MenuItem {
  readonly label: string;
  readonly disabled?: boolean | undefined;
  readonly run: () => void;
}

/**
 * A menu (role=menu) at a point: focus on its first item, arrows and Home/End move, Enter or
 * a click runs, Esc, Tab or a click elsewhere closes and gives the focus back.
 */
export function ContextMenu({
  label,
  items,
  point,
  onClose,
}: {
  readonly label: string;
  readonly items: readonly MenuItem[];
  readonly point: { readonly x: number; readonly y: number };
  readonly onClose: () => void;
}) {
  const menu = useRef<HTMLDivElement>(null);

  useEffect(() => {
    const element = menu.current;
    // Kept inside the window: a menu opened near an edge opens towards the middle.
    if (element !== null) {
      const box = element.getBoundingClientRect();
      if (box.right > window.innerWidth)
        element.style.left = `${Math.max(0, point.x - box.width)}px`;
      if (box.bottom > window.innerHeight) {
        element.style.top = `${Math.max(0, point.y - box.height)}px`;
      }
    }
    element?.querySelector<HTMLElement>("[role=menuitem]:not([aria-disabled=true])")?.focus();
    const outside = (event: PointerEvent) => {
      if (!menu.current?.contains(event.target as Node)) onClose();
    };
    document.addEventListener("pointerdown", outside, true);
    return () => document.removeEventListener("pointerdown", outside, true);
  }, [onClose, point]);

  const onKeyDown = (event: KeyboardEvent<HTMLDivElement>) => {
    const enabled = [
      ...event.currentTarget.querySelectorAll<HTMLElement>(
        "[role=menuitem]:not([aria-disabled=true])",
      ),
    ];
    const index = enabled.indexOf(document.activeElement as HTMLElement);
    const moves: Record<string, number> = {
      ArrowDown: (index + 1) % enabled.length,
      ArrowUp: (index - 1 + enabled.length) % enabled.length,
      Home: 0,
      End: enabled.length - 1,
    };
    const next = moves[event.key];
    event.stopPropagation();
    if (next !== undefined) {
      event.preventDefault();
      enabled[next]?.focus();
    } else if (event.key === "Escape" || event.key === "Tab") {
      event.preventDefault();
      onClose();
    }
  };

  return (
    <div
      ref={menu}
      role="menu"
      aria-label={label}
      className="cairn-fm-menu"
      style={{ left: point.x, top: point.y }}
      onKeyDown={onKeyDown}
    >
      {items.map((item) => (
        <button
          key={item.label}
          type="button"
          role="menuitem"
          tabIndex={-1}
          aria-disabled={item.disabled || undefined}
          className="cairn-fm-menuitem"
          onClick={() => {
            if (item.disabled) return;
            onClose();
            item.run();
          }}
        >
          {item.label}
        </button>
      ))}
    </div>
  );
}
