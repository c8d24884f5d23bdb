package containerd

import (
	"bytes"
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"github.com/pelletier/go-toml/v2"
	"github.com/pelletier/go-toml/v2/unstable"

	"github.com/kubeedge-windows/edgecore/config/ospath"
)

// Dirs are CNI directories: where plugin executables and network
// configurations are.
type Dirs struct {
	BinDir  string
	ConfDir string
}

// Settings are the CNI directories a config.toml gives containerd.
type Settings struct {
	// Version is the file's config version (VersionCRIv1 when it has none).
	Version int
	// Table is the TOML path of the CNI table for that version.
	Table []string
	// BinDirs are the plugin directories (`bin_dir`, or 2.1's `bin_dirs`);
	// nil when the file sets neither and containerd uses its default.
	BinDirs []string
	// BinKey is the key BinDirs came from, "" when unset.
	BinKey string
	// ConfDir is `conf_dir`; "" when unset.
	ConfDir string
	// Root and State are the top-level `root` and `state`: where
	// containerd keeps image content and snapshots, and its running
	// state; "" when unset and containerd uses its defaults.
	Root, State string
}

// Read returns the CNI settings of a config.toml.
func Read(data []byte) (Settings, error) {
	d, err := scan(data)
	if err != nil {
		return Settings{}, err
	}
	table := cniTable(d.version)
	if table == nil {
		return Settings{}, unsupportedVersion(d)
	}
	s := Settings{Version: d.version, Table: table}
	for _, kv := range d.values {
		if len(kv.path) != 1 || kv.kind != unstable.String || len(kv.strs) == 0 {
			continue
		}
		switch kv.path[0] {
		case "root":
			s.Root = kv.strs[0]
		case "state":
			s.State = kv.strs[0]
		}
	}
	keys, err := d.cniKeys(table)
	if err != nil {
		return Settings{}, err
	}
	if kv := keys[KeyConfDir]; kv != nil {
		s.ConfDir = kv.strs[0]
	}
	single, list := keys[KeyBinDir], keys[KeyBinDirs]
	if d.version != Version2x {
		list = nil // bin_dirs is a 2.1 key of the version 3 format only
	}
	switch {
	case single != nil && (list == nil || single.strs[0] != ""):
		// 2.1 moves a non-empty bin_dir into bin_dirs; 2.0 and 1.x read
		// only bin_dir.
		s.BinDirs, s.BinKey = single.strs, KeyBinDir
	case list != nil:
		s.BinDirs, s.BinKey = list.strs, KeyBinDirs
	}
	return s, nil
}

// EditOptions say where the CNI directories should point.
type EditOptions struct {
	// GOOS decides how paths compare: on Windows without regard to case
	// or separator style.
	GOOS string
	// Want are the directories cni-config writes to.
	Want Dirs
	// Default are containerd's own defaults on this host, which apply to a
	// key the file does not set: such a key is added only when Want differs.
	Default Dirs
	// Runtime is the installed containerd's version, when known: it decides
	// between 2.0's `bin_dir` and 2.1's `bin_dirs` for a key to add, and
	// refuses a version 3 file under containerd 1.x.
	Runtime Runtime
}

// Change is one key Edit changed or added, with the values as written in
// the file.
type Change struct {
	Key      string
	Old, New string // Old is "" for an added key
}

func (c Change) String() string {
	if c.Old == "" {
		return fmt.Sprintf("%s: added %s", c.Key, c.New)
	}
	return fmt.Sprintf("%s: %s -> %s", c.Key, c.Old, c.New)
}

type splice struct {
	start, end int
	text       string
}

// Edit returns data with the CNI keys of its config version pointing at
// o.Want, and what changed; no change gives data itself and no Changes.
// Only those values are rewritten, or lines added for them next to the
// table's other keys (or a new table at the end): every other byte stays.
func Edit(data []byte, o EditOptions) ([]byte, []Change, error) {
	d, err := scan(data)
	if err != nil {
		return nil, nil, err
	}
	table := cniTable(d.version)
	if table == nil {
		return nil, nil, unsupportedVersion(d)
	}
	if d.version == Version2x && o.Runtime.Known() && o.Runtime.Major < 2 {
		return nil, nil, &Error{Key: "version", Line: d.versionLine(),
			Problem: fmt.Sprintf("is 3, containerd 2.x's format, which the installed containerd %s refuses to start with", o.Runtime),
			Fix:     fixRegenerate}
	}
	keys, err := d.cniKeys(table)
	if err != nil {
		return nil, nil, err
	}
	e := editor{d: d, o: o, table: table, keys: keys, nl: "\n"}
	if bytes.Contains(data, []byte("\r\n")) {
		e.nl = "\r\n" // PowerShell's Out-File writes CRLF
	}
	if err := e.confDir(); err != nil {
		return nil, nil, err
	}
	if err := e.binDir(); err != nil {
		return nil, nil, err
	}
	if len(e.changes) == 0 {
		return data, nil, nil
	}
	out := e.apply()
	if err := verify(data, out, table, o); err != nil {
		return nil, nil, err
	}
	return out, e.changes, nil
}

type editor struct {
	d       *doc
	o       EditOptions
	table   []string
	keys    map[string]*keyValue
	nl      string
	splices []splice
	added   []string // lines to add, in order
	changes []Change
}

func (e *editor) keyPath(k string) string {
	return TablePath(append(append([]string{}, e.table...), k))
}

func (e *editor) same(a, b string) bool { return ospath.Same(e.o.GOOS, a, b) }

func (e *editor) confDir() error {
	want := e.o.Want.ConfDir
	kv := e.keys[KeyConfDir]
	switch {
	case want == "":
		return nil
	case kv == nil && e.same(want, e.o.Default.ConfDir):
		return nil
	case kv == nil:
		e.add(KeyConfDir, e.quote(want, e.styleLiteral()))
	case !e.same(kv.strs[0], want):
		e.replace(kv, KeyConfDir, e.quote(want, kv.literal))
	}
	return nil
}

func (e *editor) binDir() error {
	want := e.o.Want.BinDir
	if want == "" {
		return nil
	}
	single, list := e.keys[KeyBinDir], e.keys[KeyBinDirs]
	if e.d.version != Version2x {
		list = nil // bin_dirs is a 2.1 key of the version 3 format only
	}
	if single != nil && list != nil && single.strs[0] == "" {
		// 2.1's `containerd config default` writes bin_dir = '' next to
		// bin_dirs: an empty bin_dir is not set.
		single = nil
	}
	switch {
	case single != nil && list != nil:
		if len(list.strs) > 0 && !e.sameList(list.strs, e.o.Default.BinDir) {
			return &Error{Key: e.keyPath(KeyBinDir), Line: lineOf(e.d.data, single.keyStart),
				Problem: "is set together with " + KeyBinDirs + ", which containerd 2.1 and later refuse",
				Fix:     "delete the " + KeyBinDir + " line and list the directories in " + KeyBinDirs}
		}
		// 2.1 ignores a default bin_dirs next to bin_dir; 2.0 reads bin_dir.
		if !e.same(single.strs[0], want) {
			e.replace(single, KeyBinDir, e.quote(want, single.literal))
		}
	case list != nil:
		for _, s := range list.strs {
			if e.same(s, want) {
				return nil
			}
		}
		// Put ours first and keep the operator's others: containerd looks
		// for a plugin in each directory in turn.
		dirs := append([]string{want}, list.strs...)
		e.replace(list, KeyBinDirs, e.quoteList(dirs, list.literal || len(list.strs) == 0 && e.styleLiteral()))
	case single != nil:
		if !e.same(single.strs[0], want) {
			e.replace(single, KeyBinDir, e.quote(want, single.literal))
		}
	case e.same(want, e.o.Default.BinDir):
		return nil
	case e.d.version == Version2x && e.o.Runtime.hasBinDirs():
		e.add(KeyBinDirs, e.quoteList([]string{want}, e.styleLiteral()))
	default:
		// bin_dir is what 1.x and 2.0 read, and 2.1 still accepts it
		// (with a deprecation warning); bin_dirs would be ignored by 2.0.
		e.add(KeyBinDir, e.quote(want, e.styleLiteral()))
	}
	return nil
}

func (e *editor) sameList(list []string, dir string) bool {
	return len(list) == 1 && e.same(list[0], dir)
}

func (e *editor) replace(kv *keyValue, key, text string) {
	e.splices = append(e.splices, splice{start: kv.valueStart, end: kv.valueEnd, text: text})
	e.changes = append(e.changes, Change{Key: e.keyPath(key), Old: string(e.d.data[kv.valueStart:kv.valueEnd]), New: text})
}

func (e *editor) add(key, text string) {
	e.added = append(e.added, key+" = "+text)
	e.changes = append(e.changes, Change{Key: e.keyPath(key), New: text})
}

// styleLiteral reports whether new strings should be 'literal': they are
// when the table's keys, or else the file's first string, are written that
// way (containerd 2.x writes literal strings, 1.7 basic ones).
func (e *editor) styleLiteral() bool {
	for _, k := range []string{KeyConfDir, KeyBinDir, KeyBinDirs} {
		if kv := e.keys[k]; kv != nil && len(kv.strs) > 0 {
			return kv.literal
		}
	}
	for _, kv := range e.d.values {
		if kv.kind == kindString {
			return kv.literal
		}
	}
	return false
}

// quote writes s as a TOML string, literal when asked and possible.
func (e *editor) quote(s string, literal bool) string {
	if literal && !strings.ContainsAny(s, "'\r\n") && !hasControl(s) {
		return "'" + s + "'"
	}
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '\\':
			b.WriteString(`\\`)
		case r == '"':
			b.WriteString(`\"`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

func (e *editor) quoteList(list []string, literal bool) string {
	parts := make([]string, len(list))
	for i, s := range list {
		parts[i] = e.quote(s, literal)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

func hasControl(s string) bool {
	for _, r := range s {
		if r < 0x20 || r == 0x7f {
			return true
		}
	}
	return false
}

// apply writes the splices and the added lines into a copy of the data.
func (e *editor) apply() []byte {
	data := e.d.data
	if len(e.added) > 0 {
		e.splices = append(e.splices, e.insertion())
	}
	sort.Slice(e.splices, func(i, j int) bool { return e.splices[i].start < e.splices[j].start })
	var out bytes.Buffer
	at := 0
	for _, s := range e.splices {
		out.Write(data[at:s.start])
		out.WriteString(s.text)
		at = s.end
	}
	out.Write(data[at:])
	return out.Bytes()
}

// insertion places the added keys: after the last key of the CNI table
// (written the same way, dotted or not, with the same indentation), right
// under the table's header when it has no keys, or as a new table at the
// end of the file.
func (e *editor) insertion() splice {
	data := e.d.data
	var last *keyValue
	for i := range e.d.values {
		kv := &e.d.values[i]
		if len(kv.path) == len(e.table)+1 && hasPrefix(kv.path, e.table) {
			last = kv
		}
	}
	lines := func(indent, prefix string) string {
		var b strings.Builder
		for _, l := range e.added {
			b.WriteString(indent + prefix + l + e.nl)
		}
		return b.String()
	}
	at := func(off int, text string) splice {
		if off == len(data) && off > 0 && data[off-1] != '\n' {
			text = e.nl + text
		}
		return splice{start: off, end: off, text: text}
	}
	if last != nil {
		indent := string(data[last.lineStart:last.keyStart])
		return at(last.lineEnd, lines(indent, last.prefix))
	}
	for _, h := range e.d.tables {
		if samePath(h.path, e.table) {
			start := lineStart(data, h.lineEnd-1)
			indent := leadingSpace(data[start:h.lineEnd])
			return at(h.lineEnd, lines(indent+"  ", ""))
		}
	}
	text := e.nl + "[" + TablePath(e.table) + "]" + e.nl + lines("  ", "")
	if len(data) == 0 {
		text = strings.TrimPrefix(text, e.nl)
	}
	return at(len(data), text)
}

func leadingSpace(line []byte) string {
	n := 0
	for n < len(line) && (line[n] == ' ' || line[n] == '\t') {
		n++
	}
	return string(line[:n])
}

// cniKeys finds bin_dir, bin_dirs and conf_dir in the CNI table and
// refuses values of another kind, and a table written inline, which
// cannot take a key in place.
func (d *doc) cniKeys(table []string) (map[string]*keyValue, error) {
	keys := map[string]*keyValue{}
	for i := range d.values {
		kv := &d.values[i]
		if len(kv.path) <= len(table) && hasPrefix(table, kv.path) {
			return nil, &Error{Key: TablePath(kv.path), Line: lineOf(d.data, kv.keyStart),
				Problem: "is written as an inline table or value, so the CNI settings in " + TablePath(table) + " cannot be edited in place",
				Fix:     "write it as a [" + TablePath(kv.path) + "] section, or " + fixRegenerate}
		}
		if len(kv.path) != len(table)+1 || !hasPrefix(kv.path, table) {
			continue
		}
		k := kv.path[len(table)]
		switch k {
		case KeyBinDir, KeyConfDir:
			if kv.kind != kindString {
				return nil, &Error{Key: TablePath(kv.path), Line: lineOf(d.data, kv.keyStart),
					Problem: "is not a string", Fix: "write it as a quoted path, e.g. " + k + " = 'C:\\Program Files\\containerd\\cni\\conf'"}
			}
		case KeyBinDirs:
			if kv.kind != kindArray || kv.nonString {
				return nil, &Error{Key: TablePath(kv.path), Line: lineOf(d.data, kv.keyStart),
					Problem: "is not a list of strings", Fix: "write it as a list of quoted paths, e.g. bin_dirs = ['C:\\Program Files\\containerd\\cni\\bin']"}
			}
		default:
			continue
		}
		keys[k] = kv
	}
	return keys, nil
}

func (d *doc) versionLine() int {
	for _, kv := range d.values {
		if len(kv.path) == 1 && kv.path[0] == "version" {
			return lineOf(d.data, kv.keyStart)
		}
	}
	return 0
}

func unsupportedVersion(d *doc) error {
	return &Error{Key: "version", Line: d.versionLine(),
		Problem: "is " + strconv.Itoa(d.version) + "; containerd 1.x writes 2 and 2.x writes 3, and no other version is known",
		Fix:     fixRegenerate}
}

// verify re-reads the edited file: it must be valid, its CNI settings must
// be the wanted ones, and with those keys taken out both files must decode
// to the same thing. An edit that fails this is a bug here and is refused
// rather than written.
func verify(before, after []byte, table []string, o EditOptions) error {
	s, err := Read(after)
	if err != nil {
		return fmt.Errorf("the edited config.toml would not read back (%v); it was left alone", err)
	}
	bug := func(what string) error {
		return fmt.Errorf("editing config.toml went wrong (%s); it was left alone: set the CNI directories by hand in %s", what, TablePath(table))
	}
	if o.Want.ConfDir != "" && !ospath.Same(o.GOOS, orDefault(s.ConfDir, o.Default.ConfDir), o.Want.ConfDir) {
		return bug("conf_dir reads back as " + s.ConfDir)
	}
	if o.Want.BinDir != "" {
		dirs := s.BinDirs
		if dirs == nil {
			dirs = []string{o.Default.BinDir}
		}
		found := false
		for _, b := range dirs {
			found = found || ospath.Same(o.GOOS, b, o.Want.BinDir)
		}
		if !found {
			return bug("the bin directories read back as " + strings.Join(dirs, ", "))
		}
	}
	var a, b map[string]any
	if toml.Unmarshal(before, &a) != nil || toml.Unmarshal(after, &b) != nil {
		return bug("it does not decode")
	}
	dropCNI(a, table)
	dropCNI(b, table)
	if !reflect.DeepEqual(a, b) {
		return bug("more than the CNI keys would change")
	}
	return nil
}

func orDefault(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

// dropCNI removes the edited keys from a decoded file, and the CNI table
// and its parents when that leaves them empty, so that an added table
// compares equal to none.
func dropCNI(m map[string]any, table []string) {
	var rec func(m map[string]any, path []string)
	rec = func(m map[string]any, path []string) {
		child, ok := m[path[0]].(map[string]any)
		if !ok {
			return
		}
		if len(path) == 1 {
			delete(child, KeyBinDir)
			delete(child, KeyBinDirs)
			delete(child, KeyConfDir)
		} else {
			rec(child, path[1:])
		}
		if len(child) == 0 {
			delete(m, path[0])
		}
	}
	rec(m, table)
}
