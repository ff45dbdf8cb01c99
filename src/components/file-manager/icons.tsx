// Two glyphs drawn in the text colour; decorative, so hidden from assistive technology.

export function FolderIcon({ open = false }: { readonly open?: boolean }) {
  return (
    <svg className="cairn-fm-icon" viewBox="0 0 16 16" aria-hidden="true" focusable="false">
      <path
        fill="currentColor"
        d={
          open
            ? "M1.5 3h4l1.5 1.5h6.5v2H4l-2.5 6.5V3zm2.8 4.5H15L12.7 13H2z"
            : "M1.5 3h4.3l1.5 1.5h7.2V13h-13z"
        }
      />
    </svg>
  );
}

export function FileIcon() {
  return (
    <svg className="cairn-fm-icon" viewBox="0 0 16 16" aria-hidden="true" focusable="false">
      <path
        fill="none"
        stroke="currentColor"
        strokeWidth="1.2"
        d="M3.5 1.5h6l3 3v10h-9zM9.5 1.5v3h3"
      />
    </svg>
  );
}
