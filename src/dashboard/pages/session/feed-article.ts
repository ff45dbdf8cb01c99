// An article of the session's feed: where it sits (it is measured and placed by the
// virtualizer) and what the ARIA feed pattern says of it (its place in the set, its title).

/** Where an article of the feed sits, and what the feed pattern says of it. */
export interface Placement {
  ref: (element: Element | null) => void;
  index: number;
  setSize: number;
  /** Its offset from the feed's top, in pixels. */
  top: number;
}

/** The attributes an article of the feed carries. */
export function articleAttributes(placement: Placement, titleId: string) {
  return {
    ref: placement.ref,
    "data-index": placement.index,
    "aria-posinset": placement.index + 1,
    "aria-setsize": placement.setSize,
    "aria-labelledby": titleId,
    tabIndex: 0,
    style: { transform: `translateY(${placement.top}px)` },
  };
}
