// The chat component: its store, headless hook and styled component.
export {};
