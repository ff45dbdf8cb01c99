// The file-manager component: its store, headless hook and styled component.
export {};
