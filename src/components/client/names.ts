// Characters that change how the text around them is shown, or are not shown at all: bidi
// overrides, embeddings and isolates, marks, and control characters. A file named
// "invoice\u202Efdp.exe" shows as "invoiceexe.pdf"; shown through visibleName, it cannot.
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding them is the point
const hidden = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/** A name as it should be shown: each invisible or reordering character as `⟨U+XXXX⟩`. */
export function visibleName(name: string): string {
  return name.replace(
    hidden,
    (character) =>
      `⟨U+${(character.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, "0")}⟩`,
  );
}
