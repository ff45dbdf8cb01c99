// Light, dark, or as the system says: the reader's choice, kept in localStorage (a preference,
// nothing secret) and applied as the kit's data-cairn-theme on the dashboard's root.

import { useCallback, useEffect, useState } from "react";

export type ThemeChoice = "system" | "light" | "dark";

const storageKey = "cairn.dashboard.theme";

function stored(): ThemeChoice {
  try {
    const value = localStorage.getItem(storageKey);
    return value === "light" || value === "dark" ? value : "system";
  } catch {
    return "system";
  }
}

export function useTheme(): [ThemeChoice, (choice: ThemeChoice) => void] {
  const [choice, setChoice] = useState<ThemeChoice>(stored);
  useEffect(() => {
    const root = document.documentElement;
    if (choice === "system") root.removeAttribute("data-cairn-theme");
    else root.setAttribute("data-cairn-theme", choice);
  }, [choice]);
  const choose = useCallback((next: ThemeChoice) => {
    try {
      if (next === "system") localStorage.removeItem(storageKey);
      else localStorage.setItem(storageKey, next);
    } catch {
      // Storage refused (a private window's quota): the choice lasts for this page.
    }
    setChoice(next);
  }, []);
  return [choice, choose];
}
