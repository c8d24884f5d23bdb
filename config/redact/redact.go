// Package redact is the one rule for keeping credentials out of what the
// node says: error messages, log lines and the statuses of cloud jobs,
// which reach more people than the files the credentials come from (a
// job's status is read by everyone who may read the job; a log is pasted
// into tickets). Two kinds of credential reach text: those a URL carries
// (https://user:password@host/..., and a query such as ?sig=... where
// object stores put a signed token), and secrets the caller knows by
// value (the join token, a pull secret's password).
package redact

import "strings"

// Secret is what a secret known by value is replaced with.
const Secret = "<redacted>"

// URL is loc with the credentials a URL may carry replaced by ***: its
// user information (https://***@host/...) and its query (?***). It works
// on the text, so that a URL that does not parse is redacted too; a path
// (a share, C:\x) is returned as it is.
func URL(loc string) string {
	i := strings.Index(loc, "://")
	if i <= 0 || !isScheme(loc[:i]) {
		return loc
	}
	scheme, rest := loc[:i+3], loc[i+3:]
	fragment := ""
	if f := strings.IndexByte(rest, '#'); f >= 0 {
		rest, fragment = rest[:f], rest[f:]
	}
	query := ""
	if q := strings.IndexByte(rest, '?'); q >= 0 {
		rest, query = rest[:q], "?***"
	}
	// The last @ rather than the first / ends the user information: a
	// password with an unescaped / in it must not show its tail.
	if at := strings.LastIndexByte(rest, '@'); at >= 0 {
		rest = "***@" + rest[at+1:]
	}
	return scheme + rest + query + fragment
}

// String is s with every URL in it redacted as URL does, and every
// non-empty secret replaced by Secret. A URL in text runs from its scheme
// to the next white space; the quotes and punctuation a message puts
// around it are kept.
func String(s string, secrets ...string) string {
	for _, sec := range secrets {
		if strings.TrimSpace(sec) != "" {
			s = strings.ReplaceAll(s, sec, Secret)
		}
	}
	if !strings.Contains(s, "://") {
		return s
	}
	var b strings.Builder
	for {
		i := strings.Index(s, "://")
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		start := i
		for start > 0 && isSchemeByte(s[start-1], true) {
			start--
		}
		for start < i && !isSchemeByte(s[start], false) {
			start++ // a scheme starts with a letter
		}
		end := i + 3
		for end < len(s) && !isSpace(s[end]) {
			end++
		}
		if start == i {
			// Not a URL: "://" with no scheme before it.
			b.WriteString(s[:end])
			s = s[end:]
			continue
		}
		core := s[start:end]
		tail := len(core)
		for tail > 0 && strings.IndexByte("\"'`),;:.]>", core[tail-1]) >= 0 {
			tail--
		}
		b.WriteString(s[:start])
		b.WriteString(URL(core[:tail]))
		b.WriteString(core[tail:])
		s = s[end:]
	}
}

// isScheme reports whether s can be a URL's scheme (RFC 3986: a letter,
// then letters, digits, +, - and .): what comes before :// in a path
// (C:\x://y) is not.
func isScheme(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isSchemeByte(s[i], i > 0) {
			return false
		}
	}
	return s != ""
}

func isSchemeByte(c byte, notFirst bool) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
		return true
	case notFirst && (c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.'):
		return true
	}
	return false
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
