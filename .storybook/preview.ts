import type { Preview } from "@storybook/react-vite";
import "cairn-ai/react/styles.css";

const preview: Preview = {
  parameters: {
    layout: "padded",
    // Every story is checked by axe when it runs as a test; any violation fails the run.
    a11y: { test: "error" },
  },
};

export default preview;
