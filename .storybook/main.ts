import type { StorybookConfig } from "@storybook/react-vite";

const config: StorybookConfig = {
  stories: ["../stories/**/*.stories.@(ts|tsx)"],
  addons: ["@storybook/addon-a11y", "@storybook/addon-vitest"],
  framework: {
    name: "@storybook/react-vite",
    options: { builder: { viteConfigPath: ".storybook/vite.config.ts" } },
  },
  core: { disableTelemetry: true },
  viteFinal: async (viteConfig) => {
    const { fileURLToPath } = await import("node:url");
    const source = (path: string) => fileURLToPath(new URL(`../src/${path}`, import.meta.url));
    viteConfig.resolve ??= {};
    viteConfig.resolve.alias = [
      { find: /^cairn-ai$/, replacement: source("index.ts") },
      { find: "cairn-ai/react/styles.css", replacement: source("components/styles.css") },
      { find: /^cairn-ai\/(testing|sandbox|react)$/, replacement: source("$1/index.ts") },
    ];
    return viteConfig;
  },
};

export default config;
