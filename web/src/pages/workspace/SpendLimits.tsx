import { useEffect, useState } from 'preact/hooks';
import { call, client } from '../../api/client';
import type { Profile, SpendLimits as Limits } from '../../api/types';
import { ErrorNote } from '../../components/ErrorNote';

const usd = (n: number) => `$${n.toFixed(2)}`;
const capText = (cap: number | null, show: (n: number) => string) => (cap === null ? 'no cap' : show(cap));

/**
 * The workspace's spend limits (docs/teams.md, "Spend limits"): every cap at 80 % or more as a
 * notice above the page's cards, the workspace's and each member's caps with what is used this
 * month, and for the owner a form that sets the workspace's caps (members' are set through the API).
 */
export function SpendNotices({ limits }: { limits: Limits | null }) {
  if (!limits || limits.notices.length === 0) return null;
  return (
    <div class="warning" role="status" data-testid="spend-notices">
      {limits.notices.map((n) => (
        <p key={`${n.scope}-${n.account_id}-${n.cap}`}>{n.message}</p>
      ))}
    </div>
  );
}

export function useSpendLimits(id: string) {
  const [limits, setLimits] = useState<Limits | null>(null);
  const [error, setError] = useState<unknown>(null);
  const load = () =>
    call(client.GET('/v1/workspaces/{id}/limits', { params: { path: { id } } })).then(setLimits, setError);
  useEffect(() => {
    void load();
  }, [id]);
  return { limits, setLimits, error, load };
}

export function SpendLimits({
  profile,
  limits,
  setLimits,
  loadError,
}: {
  profile: Profile;
  limits: Limits | null;
  setLimits: (l: Limits) => void;
  loadError: unknown;
}) {
  const [usdCap, setUsdCap] = useState('');
  const [creditCap, setCreditCap] = useState('');
  const [error, setError] = useState<unknown>(null);
  const [said, setSaid] = useState('');
  useEffect(() => {
    if (!limits) return;
    setUsdCap(limits.monthly_spend_cap_usd === null ? '' : String(limits.monthly_spend_cap_usd));
    setCreditCap(limits.monthly_credit_cap === null ? '' : String(limits.monthly_credit_cap));
  }, [limits]);
  const save = async (e: Event) => {
    e.preventDefault();
    setError(null);
    setSaid('');
    try {
      const saved = await call(
        client.PATCH('/v1/workspaces/{id}/limits', {
          params: { path: { id: profile.workspace.id } },
          body: {
            monthly_spend_cap_usd: usdCap.trim() === '' ? null : Number(usdCap),
            monthly_credit_cap: creditCap.trim() === '' ? null : Number(creditCap),
          },
        }),
      );
      setLimits(saved);
      setSaid('Spend limits saved.');
    } catch (err) {
      setError(err);
    }
  };
  return (
    <div class="card" data-testid="spend-limits">
      <h2>Spend limits</h2>
      <ErrorNote error={loadError} />
      {limits && (
        <>
          <p class="hint">Counted over the calendar month (UTC) {limits.month}.</p>
          <dl class="facts">
            <dt>Model spend</dt>
            <dd data-testid="spend-usd">
              {usd(limits.spent_usd)} of {capText(limits.monthly_spend_cap_usd, usd)}
            </dd>
            <dt>Credits</dt>
            <dd data-testid="spend-credits">
              {limits.credits_used} of {capText(limits.monthly_credit_cap, String)}
            </dd>
          </dl>
          <table class="spend-members">
            <thead>
              <tr>
                <th>Member</th>
                <th>Model spend</th>
                <th>Credits</th>
              </tr>
            </thead>
            <tbody>
              {limits.members.map((m) => (
                <tr key={m.account_id}>
                  <td>{m.name || m.email}</td>
                  <td>
                    {usd(m.spent_usd)} of {capText(m.monthly_spend_cap_usd, usd)}
                  </td>
                  <td>
                    {m.credits_used} of {capText(m.monthly_credit_cap, String)}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          {profile.role === 'owner' && (
            <form class="form" onSubmit={save} aria-label="Set the workspace's spend limits">
              <label for="spend-cap-usd">Monthly model spend cap (USD; empty: no cap)</label>
              <input
                id="spend-cap-usd"
                type="number"
                min="0"
                step="0.01"
                value={usdCap}
                onInput={(e) => setUsdCap(e.currentTarget.value)}
              />
              <label for="spend-cap-credits">Monthly credit cap (empty: no cap)</label>
              <input
                id="spend-cap-credits"
                type="number"
                min="0"
                step="1"
                value={creditCap}
                onInput={(e) => setCreditCap(e.currentTarget.value)}
              />
              <button type="submit">Save spend limits</button>
            </form>
          )}
          {said && (
            <p class="hint" role="status">
              {said}
            </p>
          )}
          <ErrorNote error={error} />
        </>
      )}
    </div>
  );
}
