export * from './descriptor.js';
export * from './fix.js';
export * from './names.js';
export * from './outputs.js';
export * from './patch.js';
export * from './progress.js';
export * from './site.js';
export * from './steps.js';
