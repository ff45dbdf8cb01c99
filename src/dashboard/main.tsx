import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { Router } from "wouter";
import { App } from "./app.js";
import "./styles.css";

const root = document.getElementById("root");
if (root === null) throw new Error("the dashboard's page has no #root element");
// The kit's theme (custom properties, data-cairn-theme) applies to the whole page.
document.documentElement.classList.add("cairn-root", "dash-root");
createRoot(root).render(
  <StrictMode>
    <Router base="/ui">
      <App />
    </Router>
  </StrictMode>,
);
