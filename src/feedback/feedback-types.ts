/** Feedback on a task as posted and as it stands; shared by feedback.ts and the memory it makes. */

export type Correct = 'yes' | 'partial' | 'no';
export type Reuse = 'yes' | 'no';

/** What a caller posts; every field is optional (none given changes nothing). */
export interface FeedbackInput {
  rating?: number;
  correct?: Correct;
  reuse?: Reuse;
  /** An empty (or blank) note clears the note. */
  note?: string;
}

/** A task's feedback as it stands: every post merged over the ones before it. */
export interface CurrentFeedback {
  taskId: string;
  rating: number | null;
  correct: Correct | null;
  reuse: Reuse | null;
  note: string | null;
  updatedAt: Date;
  /** How many posts made it (the rows kept as history). */
  historyCount: number;
}
