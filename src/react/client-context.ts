import { createContext } from "react";
import type { CairnClient } from "./cairn-client.js";

export const CairnClientContext = createContext<CairnClient | undefined>(undefined);
