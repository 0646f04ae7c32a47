// WWW-Authenticate challenges (RFC 7235) as registries send them:
//   Bearer realm="https://auth.example/token",service="registry",scope="repository:a/b:pull"
//   Basic realm="Registry Realm"
// Only what the token flow needs: the scheme and its auth-params.

export interface Challenge {
  /** Lower-cased scheme: "bearer", "basic", ... */
  scheme: string;
  params: Record<string, string>;
}

/** Parses one header value, which may hold several challenges; unknown shapes are skipped. */
export function parseChallenges(header: string | null): Challenge[] {
  if (!header) return [];
  const out: Challenge[] = [];
  let i = 0;
  const s = header;
  const skipSpace = () => {
    while (i < s.length && (s[i] === " " || s[i] === "\t")) i++;
  };
  const token = () => {
    const start = i;
    while (i < s.length && /[!#$%&'*+\-.^_`|~0-9A-Za-z]/.test(s[i] ?? "")) i++;
    return s.slice(start, i);
  };
  while (i < s.length) {
    skipSpace();
    while (s[i] === ",") {
      i++;
      skipSpace();
    }
    const scheme = token();
    if (!scheme) break;
    const challenge: Challenge = { scheme: scheme.toLowerCase(), params: {} };
    out.push(challenge);
    for (;;) {
      skipSpace();
      const save = i;
      const name = token();
      skipSpace();
      if (!name || s[i] !== "=") {
        i = save; // next challenge's scheme (or token68 we do not use)
        if (!name) break;
        // token68 / bare word: consume it only if followed by a comma or end
        const after = s.slice(i + name.length).trimStart();
        if (after === "" || after.startsWith(",")) {
          i += name.length;
          skipSpace();
          if (s[i] === ",") i++;
          continue;
        }
        break;
      }
      i++; // '='
      skipSpace();
      let value = "";
      if (s[i] === '"') {
        i++;
        while (i < s.length && s[i] !== '"') {
          if (s[i] === "\\" && i + 1 < s.length) i++;
          value += s[i];
          i++;
        }
        i++; // closing quote
      } else {
        value = token();
      }
      challenge.params[name.toLowerCase()] = value;
      skipSpace();
      if (s[i] === ",") i++;
    }
  }
  return out;
}
