/** The entry Pi loads: herd's parent extension (see `src/parent/index.ts`). */
export { default } from "./src/parent/index.ts";
