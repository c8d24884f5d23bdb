package release

import (
	"fmt"
	"strings"
)

// ParseDigest reads the checksum of a whole package as an operator gives
// it: "sha256:<hex>" (the form of a NodeUpgradeJob's
// spec.imageDigestGatter.value and of OCI digests) or the bare hex that
// sha256sum and PowerShell's Get-FileHash print. It returns lower-case
// hex.
func ParseDigest(s string) (string, error) {
	d := strings.TrimSpace(s)
	if algo, rest, ok := strings.Cut(d, ":"); ok {
		if !strings.EqualFold(algo, "sha256") {
			return "", fmt.Errorf("digest %q uses %s; give a SHA-256 as sha256:<64 hex digits>", s, algo)
		}
		d = rest
	}
	if !isSHA256(d) {
		return "", fmt.Errorf("digest %q is not a SHA-256 (64 hex digits, optionally after sha256:)", s)
	}
	return strings.ToLower(d), nil
}

// SumFor finds name in a SHA256SUMS file that lies beside packages, as
// `sha256sum *.zip > SHA256SUMS` writes it.
func SumFor(sums []byte, name string) (string, error) {
	m, err := ParseSums(sums)
	if err != nil {
		return "", err
	}
	sum, ok := m[name]
	if !ok {
		return "", fmt.Errorf("%s does not list %s: add it with sha256sum (or Get-FileHash) where the packages are published", SumsFile, name)
	}
	return sum, nil
}
