/**
 * A patch that cannot be applied. `message` is what the user sees (kubectl prints it after
 * `error: `), worded as kubectl 1.32 words it for `kubectl patch --local`.
 */
export class PatchError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PatchError';
  }
}
