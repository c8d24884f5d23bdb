// Package quickstart reads the edgecore.exe command lines of the quick start (docs/quickstart.md)
// quick start, so that the tests which run the quick start (the Wine flag
// check and the end-to-end journey) read it one way.
package quickstart

import (
	"fmt"
	"os"
	"regexp"
	"strings"
)

// The quick start is the part of docs/quickstart.md between these markers.
const (
	begin = "<!-- quickstart -->"
	end   = "<!-- /quickstart -->"
)

var command = regexp.MustCompile("edgecore\\.exe ([a-z][^`\\n]*)")

// Commands returns the arguments of every `edgecore.exe ...` line of the
// quick start in the Markdown file at path (docs/quickstart.md), in the order they appear, with
// placeholders such as <output of keadm gettoken> left in.
func Commands(path string) ([]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	text := string(data)
	b, e := strings.Index(text, begin), strings.Index(text, end)
	if b < 0 || e < b {
		return nil, fmt.Errorf("%s has no quick start between %s and %s", path, begin, end)
	}
	var out []string
	for _, m := range command.FindAllStringSubmatch(text[b:e], -1) {
		out = append(out, strings.TrimSpace(m[1]))
	}
	return out, nil
}
