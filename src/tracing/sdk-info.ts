export const sdkName = "cairn";
// Kept in step with package.json by test/package.test.ts.
export const sdkVersion = "0.1.0";
