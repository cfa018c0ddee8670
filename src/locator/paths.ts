/** A path's file name less its extension: `lib/rules/no-shadow.js` → `no-shadow`. */
export const stemOf = (path: string) => path.slice(path.lastIndexOf('/') + 1).replace(/\.[^.]+$/, '');

/** A path's directory, `''` at the top: `lib/rules/no-shadow.js` → `lib/rules`. */
export const dirOf = (path: string) => (path.includes('/') ? path.slice(0, path.lastIndexOf('/')) : '');
