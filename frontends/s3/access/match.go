package access

// wildcard reports whether s matches pattern, where * matches any run of
// characters (slashes included) and ? exactly one. Iterative with one
// backtrack point: linear in practice, no recursion on hostile patterns.
func wildcard(pattern, s string) bool {
	p, i := 0, 0
	star, mark := -1, 0
	for i < len(s) {
		switch {
		case p < len(pattern) && pattern[p] == '*': // before the literal case: a '*' in s is no star
			star, mark = p, i
			p++
		case p < len(pattern) && (pattern[p] == '?' || pattern[p] == s[i]):
			p++
			i++
		case star >= 0:
			p = star + 1
			mark++
			i = mark
		default:
			return false
		}
	}
	for p < len(pattern) && pattern[p] == '*' {
		p++
	}
	return p == len(pattern)
}

// hasWildcard reports whether a pattern needs wildcard matching.
func hasWildcard(p string) bool {
	for i := 0; i < len(p); i++ {
		if p[i] == '*' || p[i] == '?' {
			return true
		}
	}
	return false
}

// pattern is a compiled Action or Resource pattern.
type pattern struct {
	s    string
	glob bool
}

func compile(s string) pattern { return pattern{s, hasWildcard(s)} }

func (p pattern) match(s string) bool {
	if !p.glob {
		return p.s == s
	}
	return wildcard(p.s, s)
}

func matchAny(ps []pattern, s string) bool {
	for _, p := range ps {
		if p.match(s) {
			return true
		}
	}
	return false
}
