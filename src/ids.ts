import { uuidv7 } from 'uuidv7';

/** Time-ordered ids (UUIDv7) for every row we create. */
export const newId = (): string => uuidv7();
