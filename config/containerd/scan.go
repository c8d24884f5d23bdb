package containerd

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"

	"github.com/pelletier/go-toml/v2"
	"github.com/pelletier/go-toml/v2/unstable"
)

// doc is a config.toml taken apart with byte positions: where each table
// header and each key/value pair is, so that values can be replaced and
// keys added without touching anything else.
type doc struct {
	data    []byte
	version int
	tables  []header
	values  []keyValue
}

// header is a `[table]` line.
type header struct {
	path []string
	// lineEnd is the offset just past the header's line (its newline
	// included, or the end of the file).
	lineEnd int
}

// keyValue is one `key = value` line.
type keyValue struct {
	// path is the full key: the table it is in and its own, possibly
	// dotted, key.
	path []string
	kind unstable.Kind
	// lineStart is the offset of the line's first byte; keyStart of the
	// key's.
	lineStart, keyStart int
	// prefix is the key as written up to its last part, e.g. `cni.` in
	// `cni.bin_dir = ...`; a sibling key added next to it takes the same.
	prefix string
	// valueStart and valueEnd delimit the value as written: quotes and
	// brackets included.
	valueStart, valueEnd int
	// lineEnd is the offset just past the line.
	lineEnd int
	// strs are the decoded strings of a string value or of an array of
	// strings; literal reports whether the (first) string was written
	// 'literal'.
	strs    []string
	literal bool
	// nonString is set for an array holding anything but strings.
	nonString bool
}

// Error is a config.toml containerd cannot use, or one this package will
// not edit, with the key or line and the fix.
type Error struct {
	File    string
	Key     string // the TOML key path, when the problem is a value
	Line    int    // 1-based, when known
	Problem string
	Fix     string
}

func (e *Error) Error() string {
	where := e.File
	if e.Line > 0 {
		where += ":" + strconv.Itoa(e.Line)
	}
	if e.Key != "" {
		where += ": " + e.Key
	}
	if where == "" {
		return e.Problem + "; " + e.Fix
	}
	return where + ": " + e.Problem + "; " + e.Fix
}

const fixRegenerate = `regenerate it: & "$Env:ProgramFiles\containerd\bin\containerd.exe" config default | Out-File config.toml -Encoding ascii`

// scan parses data. It refuses what containerd could not read either: a
// file PowerShell wrote as UTF-16 or with a byte-order mark, and TOML
// errors, with their line.
func scan(data []byte) (*doc, error) {
	switch {
	case bytes.HasPrefix(data, []byte{0xFF, 0xFE}), bytes.HasPrefix(data, []byte{0xFE, 0xFF}), bytes.IndexByte(data, 0) >= 0:
		return nil, &Error{Problem: "the file is UTF-16 (Windows PowerShell 5.1's > writes that), which containerd cannot read",
			Fix: "save it as ASCII (Get-Content config.toml | Set-Content -Encoding ascii config.toml), or " + fixRegenerate}
	case bytes.HasPrefix(data, []byte{0xEF, 0xBB, 0xBF}):
		return nil, &Error{Problem: "the file starts with a UTF-8 byte-order mark, which containerd cannot read",
			Fix: "save it as ASCII (Set-Content -Encoding ascii), or " + fixRegenerate}
	}
	// The full decoder also catches what the expression parser lets
	// through, such as a key defined twice.
	var whole map[string]any
	if err := toml.Unmarshal(data, &whole); err != nil {
		var de *toml.DecodeError
		if errors.As(err, &de) {
			line, _ := de.Position()
			return nil, &Error{Line: line, Problem: "not valid TOML: " + de.Error(), Fix: "correct that line, or " + fixRegenerate}
		}
		return nil, &Error{Problem: "not valid TOML: " + err.Error(), Fix: fixRegenerate}
	}
	d := &doc{data: data, version: VersionCRIv1}
	if v, ok := whole["version"]; ok {
		n, isInt := v.(int64)
		if !isInt {
			return nil, &Error{Key: "version", Problem: fmt.Sprintf("is %v, not a number", v), Fix: fixRegenerate}
		}
		d.version = int(n)
	}

	var p unstable.Parser
	p.Reset(data)
	var table []string
	for p.NextExpression() {
		e := p.Expression()
		switch e.Kind {
		case unstable.Table, unstable.ArrayTable:
			table = keyOf(e.Key())
			last := lastKey(e.Key())
			end := int(last.Raw.Offset + last.Raw.Length)
			d.tables = append(d.tables, header{path: table, lineEnd: lineEnd(data, end)})
		case unstable.KeyValue:
			kv, err := d.keyValue(&p, e, table)
			if err != nil {
				return nil, err
			}
			d.values = append(d.values, kv)
		}
	}
	if err := p.Error(); err != nil {
		return nil, &Error{Problem: "not valid TOML: " + err.Error(), Fix: fixRegenerate}
	}
	return d, nil
}

func (d *doc) keyValue(p *unstable.Parser, e *unstable.Node, table []string) (keyValue, error) {
	it := e.Key()
	first := it.Node()
	keys := keyOf(e.Key())
	last := lastKey(e.Key())
	kv := keyValue{
		path:      append(append([]string{}, table...), keys...),
		keyStart:  int(first.Raw.Offset),
		lineStart: lineStart(d.data, int(first.Raw.Offset)),
		prefix:    string(d.data[first.Raw.Offset:last.Raw.Offset]),
	}
	v := e.Value()
	kv.kind = v.Kind
	afterKey := int(last.Raw.Offset + last.Raw.Length)
	switch v.Kind {
	case unstable.String:
		kv.valueStart = int(v.Raw.Offset)
		kv.valueEnd = int(v.Raw.Offset + v.Raw.Length)
		kv.strs = []string{string(v.Data)}
		kv.literal = d.data[kv.valueStart] == '\''
	case unstable.Array:
		kv.valueStart = bytes.IndexByte(d.data[afterKey:], '[') + afterKey
		end := kv.valueStart + 1
		first := true
		for c := v.Children(); c.Next(); {
			n := c.Node()
			if n.Kind != unstable.String {
				kv.nonString = true
				continue
			}
			if first {
				kv.literal = d.data[n.Raw.Offset] == '\''
				first = false
			}
			kv.strs = append(kv.strs, string(n.Data))
			end = int(n.Raw.Offset + n.Raw.Length)
		}
		if kv.nonString {
			// Only string lists are edited; the end is not needed.
			end = kv.valueStart
		} else {
			end = closingBracket(d.data, end)
		}
		kv.valueEnd = end
	default:
		// Scalars other than strings and inline tables are never edited;
		// their position is only used to report them.
		kv.valueStart = afterKey
		kv.valueEnd = afterKey
	}
	kv.lineEnd = lineEnd(d.data, kv.valueEnd)
	return kv, nil
}

func keyOf(it unstable.Iterator) []string {
	var out []string
	for it.Next() {
		out = append(out, string(it.Node().Data))
	}
	return out
}

func lastKey(it unstable.Iterator) *unstable.Node {
	var n *unstable.Node
	for it.Next() {
		n = it.Node()
	}
	return n
}

// closingBracket returns the offset just past the `]` that closes an array
// whose last element ends at from: only whitespace, newlines, commas and
// comments can come between.
func closingBracket(data []byte, from int) int {
	for i := from; i < len(data); i++ {
		switch data[i] {
		case ']':
			return i + 1
		case '#':
			for i < len(data) && data[i] != '\n' {
				i++
			}
		}
	}
	return len(data)
}

func lineStart(data []byte, off int) int {
	return bytes.LastIndexByte(data[:off], '\n') + 1
}

// lineEnd returns the offset just past the newline of the line off is on,
// or the end of the data. A trailing comment stays on its line.
func lineEnd(data []byte, off int) int {
	if i := bytes.IndexByte(data[off:], '\n'); i >= 0 {
		return off + i + 1
	}
	return len(data)
}

func lineOf(data []byte, off int) int {
	return bytes.Count(data[:off], []byte{'\n'}) + 1
}

func samePath(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// hasPrefix reports whether path starts with prefix.
func hasPrefix(path, prefix []string) bool {
	return len(path) >= len(prefix) && samePath(path[:len(prefix)], prefix)
}

const (
	kindString = unstable.String
	kindArray  = unstable.Array
)
