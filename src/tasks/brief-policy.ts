/**
 * Briefs emend will not build a site for, recognised without a model call so they cost
 * nothing and fail at once (400 when the task is created). The planner's model judges the
 * rest and can refuse too. Kept narrow on purpose: a rule that fires on an honest brief
 * ("a bakery that sells weed killer") is worse than one the model catches later.
 */
const RULES: { reason: string; pattern: RegExp }[] = [
  {
    reason: 'pages that collect other people’s passwords or card details under another name (phishing)',
    pattern:
      /\b(phishing|steal\w*\s+(passwords?|credentials|logins?|card)|fake\s+(login|sign[- ]?in)\s+page|clone\s+of\s+\w+('s)?\s+(login|bank))/i,
  },
  {
    reason: 'impersonating a real bank, government body or company',
    pattern:
      /\b(impersonat\w+|pretend(ing)?\s+to\s+be)\b.*\b(bank|government|irs|hmrc|paypal|microsoft|apple|amazon|police)\b/i,
  },
  {
    reason: 'selling illegal drugs, weapons or forged documents',
    pattern:
      /\b(sell|buy|order|shop)\w*\b.*\b(cocaine|heroin|fentanyl|meth(amphetamine)?|untraceable\s+guns?|ghost\s+guns?|fake\s+(passports?|ids?|diplomas?)|forged\s+documents?)\b/i,
  },
  { reason: 'distributing malware', pattern: /\b(malware|ransomware|keylogger|trojan|drive[- ]by\s+download)\b/i },
  {
    reason: 'sexual content involving minors',
    pattern:
      /\b(child|minor|underage)\w*\b.*\b(sexual|porn|nude|explicit)\b|\b(sexual|porn|nude|explicit)\b.*\b(child|minor|underage)\w*\b/i,
  },
];

/** Why emend refuses the brief, or undefined when nothing here forbids it. */
export function refusalFor(brief: string): string | undefined {
  return RULES.find((r) => r.pattern.test(brief))?.reason;
}
