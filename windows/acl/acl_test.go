package acl

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"syscall"
	"testing"
)

// ace is one access control entry of an SDDL string:
// (type;flags;rights;object guid;inherit object guid;trustee).
type ace struct {
	Type, Flags, Rights, Trustee string
}

// dacl is the D: part of an SDDL string.
type dacl struct {
	Flags string // P protected, AI auto-inherited, AR
	ACEs  []ace
}

// parseDACL parses the D: part of an SDDL string, after an optional O:
// part (the owner), which ParseSDDL's tests cover. It is independent of
// ParseSDDL so that the descriptors are checked by a second reading.
func parseDACL(t *testing.T, sddl string) dacl {
	t.Helper()
	i := strings.Index(sddl, "D:")
	if i < 0 || (i > 0 && !strings.HasPrefix(sddl, "O:")) {
		t.Fatalf("%q: expected an optional O: part and a D: part", sddl)
	}
	rest := sddl[i+2:]
	var d dacl
	i = strings.IndexByte(rest, '(')
	if i < 0 {
		d.Flags = rest
		return d
	}
	d.Flags, rest = rest[:i], rest[i:]
	for rest != "" {
		if rest[0] != '(' {
			t.Fatalf("%q: expected an ACE in parentheses at %q", sddl, rest)
		}
		end := strings.IndexByte(rest, ')')
		if end < 0 {
			t.Fatalf("%q: unterminated ACE at %q", sddl, rest)
		}
		f := strings.Split(rest[1:end], ";")
		if len(f) != 6 {
			t.Fatalf("%q: ACE %q has %d fields, want 6", sddl, rest[:end+1], len(f))
		}
		d.ACEs = append(d.ACEs, ace{Type: f[0], Flags: f[1], Rights: f[2], Trustee: f[5]})
		rest = rest[end+1:]
	}
	return d
}

// controlFlags splits the flags of a D: part: P (protected), AI and AR.
func controlFlags(t *testing.T, s string) map[string]bool {
	t.Helper()
	m := map[string]bool{}
	for s != "" {
		switch {
		case strings.HasPrefix(s, "P"):
			m["P"], s = true, s[1:]
		case strings.HasPrefix(s, "AI"), strings.HasPrefix(s, "AR"):
			m[s[:2]], s = true, s[2:]
		default:
			t.Fatalf("unknown DACL flag at %q", s)
		}
	}
	return m
}

// flags splits the flags of an ACE into its two-letter flags.
func flags(t *testing.T, s string) map[string]bool {
	t.Helper()
	if len(s)%2 != 0 {
		t.Fatalf("flag string %q has an odd length", s)
	}
	m := map[string]bool{}
	for i := 0; i < len(s); i += 2 {
		m[s[i:i+2]] = true
	}
	return m
}

// Trustees that must never appear: Everyone, Users, Authenticated Users,
// Interactive, Guests, Anonymous, by alias and by SID.
var broad = map[string]string{
	"WD": "Everyone", "S-1-1-0": "Everyone",
	"BU": "BUILTIN\\Users", "S-1-5-32-545": "BUILTIN\\Users",
	"AU": "Authenticated Users", "S-1-5-11": "Authenticated Users",
	"IU": "Interactive", "S-1-5-4": "Interactive",
	"BG": "Guests", "S-1-5-32-546": "Guests",
	"AN": "Anonymous", "S-1-5-7": "Anonymous",
}

// checkOnlySystemAndAdmins asserts that d allows access to SYSTEM and
// Administrators and to no one else.
func checkOnlySystemAndAdmins(t *testing.T, name string, d dacl) {
	t.Helper()
	var trustees []string
	for _, a := range d.ACEs {
		if who, bad := broad[a.Trustee]; bad {
			t.Errorf("%s grants %s access: %+v", name, who, a)
		}
		if a.Type != "A" {
			t.Errorf("%s has a %q ACE; only allow ACEs are expected: %+v", name, a.Type, a)
		}
		trustees = append(trustees, a.Trustee)
	}
	if want := []string{"SY", "BA"}; !reflect.DeepEqual(trustees, want) {
		t.Errorf("%s trustees = %v, want exactly %v", name, trustees, want)
	}
}

func TestDirectorySDDL(t *testing.T) {
	sec, err := ParseSDDL(DirectorySDDL)
	if err != nil {
		t.Fatal(err)
	}
	if sec.Owner != "BA" {
		t.Errorf("DirectorySDDL owner = %q, want BA: a user who created the directory would otherwise keep the right to rewrite its ACL", sec.Owner)
	}
	if d := sec.Drift(); len(d) != 0 {
		t.Errorf("DirectorySDDL drifts from itself: %v", d)
	}
	d := parseDACL(t, DirectorySDDL)
	if !controlFlags(t, d.Flags)["P"] {
		t.Errorf("DACL flags %q lack P: the directory would inherit C:\\'s ACL, which lets Users read", d.Flags)
	}
	checkOnlySystemAndAdmins(t, "DirectorySDDL", d)
	for _, a := range d.ACEs {
		f := flags(t, a.Flags)
		if !f["OI"] || !f["CI"] {
			t.Errorf("ACE %+v lacks OI and CI: files and directories created later would not inherit it", a)
		}
		if f["IO"] {
			t.Errorf("ACE %+v is inherit-only: it would not apply to C:\\etc\\kubeedge itself", a)
		}
		if f["NP"] {
			t.Errorf("ACE %+v stops at the first level: deeper directories would not inherit it", a)
		}
		if a.Rights != "FA" {
			t.Errorf("ACE %+v grants %q, want full control FA", a, a.Rights)
		}
	}
}

// A parent edgecore creates lets Users read and traverse it, as C:\
// does, and no one but SYSTEM and Administrators rename, empty or
// re-permission it; it inherits nothing of C:\, whose ACL on client
// editions lets Authenticated Users modify what is made below it.
func TestParentSDDL(t *testing.T) {
	sec, err := ParseSDDL(ParentSDDL)
	if err != nil {
		t.Fatal(err)
	}
	if sec.Owner != "BA" || !sec.Protected {
		t.Errorf("ParentSDDL = %+v, want Administrators its owner and a protected DACL", sec)
	}
	if g := sec.Removable(); len(g) != 0 {
		t.Errorf("ParentSDDL lets others rename or empty it: %v", g)
	}
	others := sec.Others()
	if len(others) != 1 || others[0].Write || !SameSID(others[0].Trustee, "BU") || others[0].String() != `BUILTIN\Users may read (0x1200a9)` {
		t.Errorf("ParentSDDL grants others %v, want Users read and traverse only", others)
	}
	// What the check above reads is what a second reading finds.
	d := parseDACL(t, ParentSDDL)
	if !controlFlags(t, d.Flags)["P"] || len(d.ACEs) != 3 {
		t.Errorf("ParentSDDL parses as %+v", d)
	}
	for _, a := range d.ACEs {
		if f := flags(t, a.Flags); !f["OI"] || !f["CI"] || f["IO"] {
			t.Errorf("ACE %+v: want it on the directory and on what is created below it", a)
		}
	}
}

func TestObjectSDDLs(t *testing.T) {
	for name, sddl := range map[string]string{"PipeSDDL": PipeSDDL, "EventSDDL": EventSDDL} {
		d := parseDACL(t, sddl)
		if !controlFlags(t, d.Flags)["P"] {
			t.Errorf("%s: DACL flags %q lack P", name, d.Flags)
		}
		checkOnlySystemAndAdmins(t, name, d)
		for _, a := range d.ACEs {
			if a.Flags != "" {
				t.Errorf("%s: ACE %+v has inheritance flags; a pipe or an event has no children", name, a)
			}
			if a.Rights != "GA" {
				t.Errorf("%s: ACE %+v grants %q, want GA", name, a, a.Rights)
			}
		}
	}
}

func TestInheritOnlySDDLIsAnEmptyDACL(t *testing.T) {
	d := parseDACL(t, inheritOnlySDDL)
	if len(d.ACEs) != 0 || d.Flags != "" {
		t.Errorf("%q = %+v, want an empty unprotected DACL so that only inherited ACEs remain", inheritOnlySDDL, d)
	}
}

func TestParseDACLSeesEveryone(t *testing.T) {
	// The checks above are only as good as the parser: a descriptor that
	// lets Everyone read must be caught.
	d := parseDACL(t, "D:PAI(A;OICI;FA;;;SY)(A;OICI;FA;;;BA)(A;OICI;FR;;;WD)")
	if len(d.ACEs) != 3 || d.ACEs[2].Trustee != "WD" || d.ACEs[2].Rights != "FR" || d.Flags != "PAI" {
		t.Fatalf("parsed %+v", d)
	}
	if who := broad[d.ACEs[2].Trustee]; who != "Everyone" {
		t.Errorf("WD not recognised as Everyone")
	}
}

func linkByMode(_ string, d fs.DirEntry) (bool, error) { return isLinkMode(d.Type()), nil }

// symlink makes a symbolic link for the walk tests. Windows allows that
// only with Developer Mode or elevation; without them the test skips, since
// the walk is the same code on every platform and runs on Linux too.
func symlink(t *testing.T, target, link string) {
	t.Helper()
	err := os.Symlink(target, link)
	if runtime.GOOS == "windows" && errors.Is(err, errPrivilegeNotHeld) {
		t.Skipf("creating a symbolic link needs Developer Mode or an elevated prompt on Windows (%v); the walk is tested on Linux", err)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// errPrivilegeNotHeld is ERROR_PRIVILEGE_NOT_HELD, what CreateSymbolicLink
// fails with without the privilege.
const errPrivilegeNotHeld = syscall.Errno(1314)

// tempDir is t.TempDir without its os.RemoveAll clean-up, which fails under
// Wine 8: Go's RemoveAll on Windows deletes through handles relative to the
// directory, which Wine answers with "Invalid function". Removing entry by
// entry works on every host.
func tempDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "acl-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := removeTree(dir); err != nil {
			t.Error(err)
		}
	})
	return dir
}

// removeTree removes dir and everything below it, deepest first, without
// following links.
func removeTree(dir string) error {
	var paths []string
	if err := filepath.WalkDir(dir, func(p string, _ fs.DirEntry, err error) error {
		paths = append(paths, p)
		return err
	}); err != nil {
		return err
	}
	var errs []error
	for i := len(paths) - 1; i >= 0; i-- {
		if err := os.Remove(paths[i]); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func TestWalkVisitsTheTreeButNotThroughLinks(t *testing.T) {
	base := tempDir(t)
	root := filepath.Join(base, "kubeedge")
	outside := filepath.Join(base, "outside")
	for _, d := range []string{"config", "ca", "certs/sub", "../outside"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"config/edgecore.yaml", "certs/server.key", "certs/sub/x", "../outside/secret"} {
		if err := os.WriteFile(filepath.Join(root, f), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	symlink(t, outside, filepath.Join(root, "link-to-outside"))
	symlink(t, filepath.Join(outside, "secret"), filepath.Join(root, "config", "secret-link"))

	var visited []string
	roots := 0
	err := walk(root, linkByMode, nil, func(path string, isRoot bool) error {
		rel, _ := filepath.Rel(root, path)
		visited = append(visited, filepath.ToSlash(rel))
		if isRoot {
			roots++
			if path != root {
				t.Errorf("isRoot for %s", path)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{".", "ca", "certs", "certs/server.key", "certs/sub", "certs/sub/x", "config", "config/edgecore.yaml"}
	if !reflect.DeepEqual(visited, want) {
		t.Errorf("visited %v\nwant    %v", visited, want)
	}
	if roots != 1 || visited[0] != "." {
		t.Errorf("the root must be visited first and once; visited %v", visited)
	}
}

// What leave names (a pod's volumes, workloads' files) is neither changed
// nor entered, and the root is always visited.
func TestWalkLeavesWhatItIsTold(t *testing.T) {
	root := tempDir(t)
	for _, d := range []string{"pods/uid/volumes/v", "pods/uid/plugins", "volumeplugins"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"pods/uid/volumes/v/data", "pods/uid/etc-hosts", "volumeplugins/driver.exe"} {
		if err := os.WriteFile(filepath.Join(root, f), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	var visited []string
	leave := func(p string) bool { return filepath.Base(p) == "volumes" || p == root }
	if err := walk(root, linkByMode, leave, func(path string, _ bool) error {
		rel, _ := filepath.Rel(root, path)
		visited = append(visited, filepath.ToSlash(rel))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	want := []string{".", "pods", "pods/uid", "pods/uid/etc-hosts", "pods/uid/plugins", "volumeplugins", "volumeplugins/driver.exe"}
	if !reflect.DeepEqual(visited, want) {
		t.Errorf("visited %v\nwant    %v", visited, want)
	}
}

// Sockets and deduplicated files are reparse points that stand for
// nothing else; every other one is a link.
func TestEntryIsLink(t *testing.T) {
	for _, c := range []struct {
		e    Entry
		link bool
		kind string
	}{
		{Entry{}, false, ""},
		{Entry{Reparse: true, ReparseTag: ReparseTagSymlink}, true, "a symbolic link"},
		{Entry{Reparse: true, ReparseTag: ReparseTagMountPoint}, true, "a junction or mount point"},
		{Entry{Reparse: true}, true, "a symbolic link, junction or mount point"},
		{Entry{Reparse: true, ReparseTag: 0x9000001A}, true, "a reparse point (tag 0x9000001a)"},
		{Entry{Reparse: true, ReparseTag: ReparseTagAFUnix}, false, ""},
		{Entry{Reparse: true, ReparseTag: ReparseTagDedup}, false, ""},
	} {
		if got := c.e.IsLink(); got != c.link {
			t.Errorf("%+v: IsLink = %v", c.e, got)
		}
		if c.link && c.e.LinkKind() != c.kind {
			t.Errorf("%+v: LinkKind = %q, want %q", c.e, c.e.LinkKind(), c.kind)
		}
	}
}

func TestWalkRefusesALinkAsRoot(t *testing.T) {
	base := tempDir(t)
	if err := os.Mkdir(filepath.Join(base, "real"), 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(base, "kubeedge")
	symlink(t, filepath.Join(base, "real"), link)
	if _, err := os.Lstat(link); err != nil && runtime.GOOS == "windows" {
		// Not the walk's doing: the link was made a moment ago.
		t.Skipf("this host cannot stat the symbolic link to a directory it just made (%v), which Wine 8 does (GetFileAttributesEx answers File not found); the refusal is tested on Linux", err)
	}
	called := false
	err := walk(link, linkByMode, nil, func(string, bool) error { called = true; return nil })
	if err == nil || !strings.Contains(err.Error(), "symbolic link or junction") {
		t.Errorf("walk of a link = %v, want a refusal", err)
	}
	if called {
		t.Error("walk changed something through a link root")
	}
}

func TestWalkNamesAMissingRoot(t *testing.T) {
	root := filepath.Join(tempDir(t), "missing")
	err := walk(root, linkByMode, nil, func(string, bool) error { return nil })
	if err == nil || !strings.Contains(err.Error(), root) || !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("walk of a missing root = %v, want a not-exist error naming it", err)
	}
}

func TestWalkStopsAtTheFirstFailureNamingThePath(t *testing.T) {
	root := tempDir(t)
	if err := os.WriteFile(filepath.Join(root, "a"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	denied := errors.New("access is denied")
	err := walk(root, linkByMode, nil, func(path string, isRoot bool) error {
		if !isRoot {
			return denied
		}
		return nil
	})
	if !errors.Is(err, denied) || !strings.Contains(err.Error(), filepath.Join(root, "a")) {
		t.Errorf("walk = %v, want the apply error naming the file", err)
	}
}

// The descriptor of a secret file created outside the node's folders
// admits SYSTEM and Administrators only, owned by Administrators, and
// does not inherit its folder's ACL.
func TestFileSDDL(t *testing.T) {
	sec, err := ParseSDDL(FileSDDL)
	if err != nil {
		t.Fatal(err)
	}
	if sec.Owner != "BA" {
		t.Errorf("owner %q, want BA", sec.Owner)
	}
	if g := sec.Others(""); len(g) != 0 {
		t.Errorf("FileSDDL admits others: %v", g)
	}
	if !controlFlags(t, parseDACL(t, FileSDDL).Flags)["P"] {
		t.Error("FileSDDL's DACL is not protected from inheritance")
	}
}
