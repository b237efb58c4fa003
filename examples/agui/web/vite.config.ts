import { defineConfig } from "vite";
import react from "@vitejs/plugin-react";

// Relative asset URLs, so the built app works wherever the agent mounts it.
export default defineConfig({
  base: "./",
  plugins: [react()],
  build: { chunkSizeWarningLimit: 4096 },
});
