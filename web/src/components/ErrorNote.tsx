import { describeError } from '../api/errors';

/** An API error in words: our sentence, then the server's message and request id. */
export function ErrorNote({ error }: { error: unknown }) {
  if (!error) return null;
  const { sentence, detail, requestId } = describeError(error);
  return (
    <div class="error" role="alert">
      <p>{sentence}</p>
      {detail && <p class="detail">Server said: {detail}</p>}
      {requestId && <p class="detail">Request id: {requestId}</p>}
    </div>
  );
}
