// Command checkrelease keeps a released version from being built again
// with other contents. build/released-versions lists every release of
// edgecore for Windows, one a line:
//
//	v0.1.0 v1.20.0 047352bccd57 <SHA-256 of edgecore-v0.1.0-windows-amd64.zip>
//
// (the version, the KubeEdge release it is built from, the commit and the
// package's digest; # starts a comment). build/package.sh runs it on every
// package it makes:
//
//	checkrelease -list build/released-versions -kubeedge v1.23.1 v0.2.0 edgecore-v0.2.0-windows-amd64.zip
//
// and it fails when v0.2.0 is listed with another digest or another
// KubeEdge release, so that two different zips never carry one version.
// With -released the version must be listed too: the Makefile checks so
// the previous release it rebuilds from its commit for `make e2e`, whose
// package must be the very zip that was released. Without a version and a
// zip it only checks the list (make vet).
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"

	"github.com/kubeedge-windows/edgecore/internal/release"
)

// Release is one line of the list.
type Release struct {
	Version  string
	KubeEdge string
	Commit   string
	SHA256   string
	Line     int
}

var (
	commitRe = regexp.MustCompile(`^[0-9a-f]{7,40}$`)
	sha256Re = regexp.MustCompile(`^[0-9a-f]{64}$`)
)

// Parse reads the list: four fields a line, versions in ascending order
// and each at most once. Errors name the line, the field, the value and
// what it must be.
func Parse(r io.Reader, name string) ([]Release, error) {
	var out []Release
	s := bufio.NewScanner(r)
	n := 0
	for s.Scan() {
		n++
		line := strings.TrimSpace(s.Text())
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = strings.TrimSpace(line[:i])
		}
		if line == "" {
			continue
		}
		f := strings.Fields(line)
		if len(f) != 4 {
			return nil, fmt.Errorf("%s:%d: %d fields; want 4: version, KubeEdge version, commit, SHA-256 of the package", name, n, len(f))
		}
		rel := Release{Version: f[0], KubeEdge: f[1], Commit: f[2], SHA256: f[3], Line: n}
		if err := release.CheckVersion("version", rel.Version); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", name, n, err)
		}
		if err := release.CheckVersion("KubeEdge version", rel.KubeEdge); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", name, n, err)
		}
		if !commitRe.MatchString(rel.Commit) {
			return nil, fmt.Errorf("%s:%d: commit %q is not 7 to 40 lower-case hex digits", name, n, rel.Commit)
		}
		if !sha256Re.MatchString(rel.SHA256) {
			return nil, fmt.Errorf("%s:%d: SHA-256 %q is not 64 lower-case hex digits (sha256sum of the package)", name, n, rel.SHA256)
		}
		if len(out) > 0 {
			last := out[len(out)-1]
			c, err := release.Compare(last.Version, rel.Version)
			if err != nil {
				return nil, fmt.Errorf("%s:%d: %w", name, n, err)
			}
			if c == 0 {
				return nil, fmt.Errorf("%s:%d: version %s is listed twice (also on line %d): a version is released once", name, n, rel.Version, last.Line)
			}
			if c > 0 {
				return nil, fmt.Errorf("%s:%d: version %s comes after %s (line %d): keep the list in ascending order", name, n, rel.Version, last.Version, last.Line)
			}
		}
		out = append(out, rel)
	}
	if err := s.Err(); err != nil {
		return nil, fmt.Errorf("reading %s: %w", name, err)
	}
	return out, nil
}

// Check refuses a package of version built from kubeedge with digest sum
// when the list has that version with other contents, or, when released
// is set, does not list that version at all.
func Check(list []Release, listName, version, kubeedge, sum string, released bool) error {
	listed := false
	for _, r := range list {
		if r.Version != version {
			continue
		}
		fix := "raise VERSION in the Makefile for a new release, or build the released commit " + r.Commit + " as it was built"
		if r.KubeEdge != kubeedge {
			return fmt.Errorf("version %s is already released (%s:%d) built from KubeEdge %s; this package is built from KubeEdge %s: %s",
				version, listName, r.Line, r.KubeEdge, kubeedge, fix)
		}
		if r.SHA256 != sum {
			return fmt.Errorf("version %s is already released (%s:%d) as a package with SHA-256 %s; this one has %s: %s",
				version, listName, r.Line, r.SHA256, sum, fix)
		}
		listed = true
	}
	if released && !listed {
		return fmt.Errorf("version %s is not a release %s lists: name a listed version, or add its line when it is published", version, listName)
	}
	return nil
}

func run(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("checkrelease", flag.ContinueOnError)
	listPath := fs.String("list", "build/released-versions", "the list of released versions")
	kubeedge := fs.String("kubeedge", "", "the KubeEdge release the package is built from")
	released := fs.Bool("released", false, "the version must be a listed release (a rebuilt release is checked against its digest)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	f, err := os.Open(*listPath)
	if err != nil {
		return err
	}
	defer f.Close()
	list, err := Parse(f, *listPath)
	if err != nil {
		return err
	}
	switch fs.NArg() {
	case 0:
		fmt.Fprintf(stdout, "%s: %d released versions\n", *listPath, len(list))
		return nil
	case 2:
	default:
		return fmt.Errorf("usage: checkrelease [-list FILE] [-released] [-kubeedge VERSION VERSION PACKAGE.zip]")
	}
	version, zip := fs.Arg(0), fs.Arg(1)
	if err := release.CheckVersion("version", version); err != nil {
		return err
	}
	if err := release.CheckVersion("-kubeedge", *kubeedge); err != nil {
		return err
	}
	sum, err := release.FileSHA256(zip)
	if err != nil {
		return err
	}
	return Check(list, *listPath, version, *kubeedge, sum, *released)
}

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "checkrelease:", err)
		os.Exit(1)
	}
}
