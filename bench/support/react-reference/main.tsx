// React and ReactDOM rendering one element: what any React app ships at the least, built by the
// dashboard bench with the dashboard's settings as the reference for its initial JavaScript.

import { createRoot } from "react-dom/client";

createRoot(document.getElementById("root") as HTMLElement).render(<p>Cairn</p>);
