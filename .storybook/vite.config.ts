// Storybook's own Vite configuration: the repository's vite.config.ts builds the library
// (entries, externals, the CLI's chmod) and is not for a static site of stories.
import { defineConfig } from "vite";

export default defineConfig({});
