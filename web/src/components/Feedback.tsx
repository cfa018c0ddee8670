import { useState } from 'preact/hooks';
import { call, client } from '../api/client';
import type { paths } from '../api/schema';
import { ErrorNote } from './ErrorNote';

type FeedbackBody = NonNullable<paths['/v1/tasks/{id}/feedback']['post']['requestBody']>['content']['application/json'];
type Stored = paths['/v1/tasks/{id}/feedback']['post']['responses'][200]['content']['application/json'];
type Correct = NonNullable<FeedbackBody['correct']>;
type Reuse = NonNullable<FeedbackBody['reuse']>;

/** The answers the selects offer, checked against the document's vocabulary. */
const CORRECT: readonly Correct[] = ['yes', 'partial', 'no'];
const REUSE: readonly Reuse[] = ['yes', 'no'];
const pick = <T extends string>(values: readonly T[], value: string): T | '' => values.find((v) => v === value) ?? '';

/** Stars, was it correct, reuse it, a note: POST /v1/tasks/{id}/feedback (it tunes later runs on the repository). */
export function FeedbackForm({ taskId }: { taskId: string }) {
  const [rating, setRating] = useState<number | null>(null);
  const [correct, setCorrect] = useState<Correct | ''>('');
  const [reuse, setReuse] = useState<Reuse | ''>('');
  const [note, setNote] = useState('');
  const [saved, setSaved] = useState<Stored | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);

  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const body: FeedbackBody = {};
      if (rating !== null) body.rating = rating;
      if (correct) body.correct = correct;
      if (reuse) body.reuse = reuse;
      if (note.trim()) body.note = note.trim();
      setSaved(await call(client.POST('/v1/tasks/{id}/feedback', { params: { path: { id: taskId } }, body })));
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };

  return (
    <form class="card form feedback" onSubmit={submit} aria-labelledby="feedback-heading">
      <h2 id="feedback-heading">Feedback</h2>
      <fieldset class="stars">
        <legend>Rating</legend>
        {[0, 1, 2, 3, 4, 5].map((n) => (
          <label key={n} class="inline">
            <input type="radio" name="rating" value={n} checked={rating === n} onChange={() => setRating(n)} />
            {n === 0 ? '0 stars' : `${'★'.repeat(n)} ${n}`}
          </label>
        ))}
      </fieldset>
      <label for="fb-correct">Was the result correct?</label>
      <select id="fb-correct" value={correct} onChange={(e) => setCorrect(pick(CORRECT, e.currentTarget.value))}>
        <option value="">(no answer)</option>
        <option value="yes">Yes</option>
        <option value="partial">Partly</option>
        <option value="no">No</option>
      </select>
      <label for="fb-reuse">Use it as an example for later tasks on this repository?</label>
      <select id="fb-reuse" value={reuse} onChange={(e) => setReuse(pick(REUSE, e.currentTarget.value))}>
        <option value="">(no answer)</option>
        <option value="yes">Yes</option>
        <option value="no">No</option>
      </select>
      <label for="fb-note">Note</label>
      <textarea
        id="fb-note"
        rows={3}
        maxLength={4000}
        value={note}
        onInput={(e) => setNote((e.target as HTMLTextAreaElement).value)}
      />
      <button type="submit" disabled={busy}>
        Send feedback
      </button>
      <ErrorNote error={error} />
      {saved && (
        <p role="status" class="ok">
          Thank you: feedback saved
          {saved.rating !== null && saved.rating !== undefined ? ` (${saved.rating} of 5)` : ''}.
        </p>
      )}
    </form>
  );
}
