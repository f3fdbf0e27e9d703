// Joining: an invite link's one-click join, a request to join, and the person's own view.
export function startJoin() {}
