// Placeholder until deploy/local provides the real stack (issue 4): starts nothing.
export function setup(): void {}
export function teardown(): void {}
