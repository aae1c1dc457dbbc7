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

// extends reports whether the wildcard pattern matches some string that
// begins with prefix and is longer (an object's ARN: its key is not
// empty): whether a prefix of the pattern can consume all of prefix and
// leave some of the pattern (what is left then matches some non-empty
// suffix). The set of pattern positions is tracked, so it is linear in
// len(prefix) times len(pattern).
func extends(pattern, prefix string) bool {
	cur := make([]bool, len(pattern)+1)
	next := make([]bool, len(pattern)+1)
	cur[0] = true
	closeStars := func(set []bool) {
		for p := 0; p < len(pattern); p++ {
			if set[p] && pattern[p] == '*' {
				set[p+1] = true
			}
		}
	}
	closeStars(cur)
	for i := 0; i < len(prefix); i++ {
		clear(next)
		live := false
		for p := 0; p < len(pattern); p++ { // the end of the pattern takes no more
			if !cur[p] {
				continue
			}
			switch pattern[p] {
			case '*':
				next[p] = true
				live = true
			case '?', prefix[i]:
				next[p+1] = true
				live = true
			}
		}
		if !live {
			return false
		}
		cur, next = next, cur
		closeStars(cur)
	}
	for p := 0; p < len(pattern); p++ {
		if cur[p] {
			return true // pattern[p] can take one more character
		}
	}
	return false
}
