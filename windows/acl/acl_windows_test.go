//go:build windows

package acl

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/windows"
)

func TestApplyTreeRestrictsTheTree(t *testing.T) {
	// Once applied, only SYSTEM and Administrators may delete the files;
	// an unelevated run could not clean up.
	if !windows.GetCurrentProcessToken().IsElevated() {
		t.Skip("needs an elevated prompt")
	}
	root, err := os.MkdirTemp("", "kubeedge-acl-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(root) })
	key := filepath.Join(root, "certs", "server.key")
	if err := os.MkdirAll(filepath.Dir(key), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(key, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	// An explicit ACE letting Everyone read, as a copied-in file may carry.
	open, err := daclOf("D:(A;;FR;;;WD)")
	if err != nil {
		t.Fatal(err)
	}
	if err := windows.SetNamedSecurityInfo(key, windows.SE_FILE_OBJECT, windows.DACL_SECURITY_INFORMATION, nil, nil, open, nil); err != nil {
		t.Fatal(err)
	}

	if err := ApplyTree(root, DirectorySDDL, nil); err != nil {
		t.Fatal(err)
	}
	// Wine 8 accepts SetNamedSecurityInfo on files but keeps no file
	// security descriptor (the user.wine.sd extended attribute is
	// wine-staging's, not Wine's): GetNamedSecurityInfo reads back owner
	// and DACL made up from the Unix owner and mode bits, whatever was set.
	// What can be checked there is: ApplyTree returned no error above, and
	// Windows' own parser makes of the descriptor what it should
	// (TestWindowsParsesTheDescriptors).
	if windows.NewLazySystemDLL("ntdll.dll").NewProc("wine_get_version").Find() == nil {
		back, err := Describe(key)
		t.Skipf("Wine 8 keeps no file ACLs: after ApplyTree, %s reads back as %s (%v), made up from its Unix mode", filepath.Base(key), back, err)
	}

	sec, err := Read(root)
	if err != nil {
		t.Fatal(err)
	}
	if d := sec.Drift(); len(d) != 0 {
		t.Errorf("root read back with owner and DACL %+v drifts: %v", sec, d)
	}
	for _, p := range []string{filepath.Dir(key), key} {
		sec, err := Read(p)
		if err != nil {
			t.Fatal(err)
		}
		if !SameSID(sec.Owner, "BA") {
			t.Errorf("%s is owned by %s, want Administrators", p, TrusteeName(sec.Owner))
		}
		if g := sec.Others(); len(g) != 0 {
			t.Errorf("%s grants %v", p, g)
		}
	}

	got, err := Describe(root)
	if err != nil {
		t.Fatal(err)
	}
	d := parseDACL(t, got)
	if !controlFlags(t, d.Flags)["P"] {
		t.Errorf("root DACL %s is not protected", got)
	}
	checkOnlySystemAndAdmins(t, "root "+got, d)

	for _, p := range []string{filepath.Dir(key), key} {
		got, err := Describe(p)
		if err != nil {
			t.Fatal(err)
		}
		d := parseDACL(t, got)
		checkOnlySystemAndAdmins(t, p+" "+got, d)
		for _, a := range d.ACEs {
			if !strings.Contains(a.Flags, "ID") {
				t.Errorf("%s: ACE %+v is not inherited from the root", p, a)
			}
		}
	}
}

func TestWindowsParsesTheDescriptors(t *testing.T) {
	// Windows' own parser must accept the strings, and what it makes of
	// them must still admit only SYSTEM and Administrators.
	for name, sddl := range map[string]string{"DirectorySDDL": DirectorySDDL, "PipeSDDL": PipeSDDL} {
		sd, err := windows.SecurityDescriptorFromString(sddl)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if _, err := daclOf(sddl); err != nil {
			t.Fatal(err)
		}
		checkOnlySystemAndAdmins(t, name+" as Windows reads it", parseDACL(t, sd.String()))
	}
	if _, err := daclOf(inheritOnlySDDL); err != nil {
		t.Fatal(err)
	}
	sd, err := windows.SecurityDescriptorFromString(ParentSDDL)
	if err != nil {
		t.Fatal(err)
	}
	sec, err := ParseSDDL(sd.String())
	if err != nil || len(sec.Removable()) != 0 || !sec.Protected {
		t.Errorf("ParentSDDL as Windows reads it: %+v, %v", sec, err)
	}
}

// Mkdir hands Windows the descriptor with the request that creates the
// directory; on Windows it is the directory's from its first moment.
func TestMkdirCreatesWithTheDescriptor(t *testing.T) {
	// Administrators as the owner needs an elevated prompt.
	if !windows.GetCurrentProcessToken().IsElevated() {
		t.Skip("needs an elevated prompt")
	}
	base := tempDir(t)
	dir := filepath.Join(base, "kubeedge")
	if err := Mkdir(dir, DirectorySDDL); err != nil {
		t.Fatal(err)
	}
	if err := Mkdir(dir, DirectorySDDL); !errors.Is(err, fs.ErrExist) {
		t.Errorf("Mkdir of an existing directory = %v, want fs.ErrExist", err)
	}
	if err := Mkdir(filepath.Join(base, "missing", "x"), ""); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Mkdir below a missing parent = %v, want fs.ErrNotExist", err)
	}
	inherits := filepath.Join(dir, "certs")
	if err := Mkdir(inherits, ""); err != nil {
		t.Fatal(err)
	}
	if windows.NewLazySystemDLL("ntdll.dll").NewProc("wine_get_version").Find() == nil {
		back, err := Describe(dir)
		t.Skipf("Wine 8 keeps no file ACLs: %s reads back as %s (%v), made up from its Unix mode", dir, back, err)
	}
	sec, err := Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	if d := sec.Drift(); len(d) != 0 {
		t.Errorf("%s drifts at creation: %v", dir, d)
	}
	sec, err = Read(inherits)
	if err != nil {
		t.Fatal(err)
	}
	if g := sec.Others(); len(g) != 0 {
		t.Errorf("%s, made with its parent's ACL, grants %v", inherits, g)
	}
}

func TestCreateFileCreatesWithTheDescriptor(t *testing.T) {
	// Administrators as the owner needs an elevated prompt.
	if !windows.GetCurrentProcessToken().IsElevated() {
		t.Skip("needs an elevated prompt")
	}
	p := filepath.Join(tempDir(t), "edgecore.yaml")
	f, err := CreateFile(p, FileSDDL)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("token: x\n"); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if _, err := CreateFile(p, FileSDDL); !errors.Is(err, fs.ErrExist) {
		t.Errorf("CreateFile of an existing file = %v, want fs.ErrExist", err)
	}
	if b, err := os.ReadFile(p); err != nil || string(b) != "token: x\n" {
		t.Errorf("read back %q, %v", b, err)
	}
	if windows.NewLazySystemDLL("ntdll.dll").NewProc("wine_get_version").Find() == nil {
		back, err := Describe(p)
		t.Skipf("Wine 8 keeps no file ACLs: %s reads back as %s (%v), made up from its Unix mode; the descriptor handed to CreateFile is FileSDDL, judged by TestFileSDDL", p, back, err)
	}
	sec, err := Read(p)
	if err != nil {
		t.Fatal(err)
	}
	if g := sec.Others(); len(g) != 0 {
		t.Errorf("%s grants %v at creation", p, g)
	}
}

// List reads each entry from itself: a file's second name (a hard link)
// shows as two names of one file, a folder as a folder, each with its
// owner.
func TestListReadsEachEntryItself(t *testing.T) {
	dir := tempDir(t)
	if err := os.WriteFile(filepath.Join(dir, "a.tar"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(filepath.Join(dir, "a.tar"), filepath.Join(dir, "b.tar")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "manifests"), 0o755); err != nil {
		t.Fatal(err)
	}
	entries, err := List(dir)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]Entry{}
	for _, e := range entries {
		byName[e.Name] = e
	}
	a, b, m := byName["a.tar"], byName["b.tar"], byName["manifests"]
	if len(entries) != 3 || a.Links != 2 || b.Links != 2 || a.Dir || !m.Dir || m.Links != 1 {
		t.Fatalf("List = %+v", entries)
	}
	if a.ID == "" || a.ID != b.ID || a.ID == m.ID {
		t.Errorf("identities: a.tar %q, b.tar %q, manifests %q: want one file under two names and a folder of its own", a.ID, b.ID, m.ID)
	}
	for _, e := range entries {
		if e.Security.Owner == "" || e.Reparse || e.IsLink() {
			t.Errorf("%s: %+v", e.Name, e)
		}
	}
}

// A symbolic link is listed as a link, never as what it points to.
func TestListSeesASymbolicLink(t *testing.T) {
	dir := tempDir(t)
	if err := os.Mkdir(filepath.Join(dir, "manifests"), 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "certs")
	symlink(t, filepath.Join(dir, "manifests"), link)
	if _, err := os.Lstat(link); err != nil {
		t.Skipf("this host made no symbolic link (%v): Wine 8's CreateSymbolicLink reports success and makes nothing; "+
			"a Unix symbolic link Wine lists as a reparse point is refused in test/wine TestServiceInstallRefusesLinksBelowTheNodesFolders", err)
	}
	entries, err := List(dir)
	if err != nil {
		t.Fatal(err)
	}
	seen := false
	for _, e := range entries {
		if e.Name == "certs" {
			seen = true
			if !e.IsLink() || e.ReparseTag != ReparseTagSymlink {
				t.Errorf("certs, a symbolic link, listed as %+v", e)
			}
		}
	}
	if !seen {
		t.Errorf("List = %+v, without the link", entries)
	}
}

// What ReadSDDL reads SetSDDL puts back, owner and protection included.
func TestSetSDDLPutsBackWhatReadSDDLRead(t *testing.T) {
	if !windows.GetCurrentProcessToken().IsElevated() {
		t.Skip("needs an elevated prompt")
	}
	dir := tempDir(t)
	before, err := ReadSDDL(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := ApplyTree(dir, DirectorySDDL, nil); err != nil {
		t.Fatal(err)
	}
	if err := SetSDDL(dir, before); err != nil {
		t.Fatal(err)
	}
	if windows.NewLazySystemDLL("ntdll.dll").NewProc("wine_get_version").Find() == nil {
		t.Skipf("Wine 8 keeps no file ACLs: SetSDDL was accepted, but %s reads back as made up from its Unix mode", dir)
	}
	after, err := ReadSDDL(dir)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := ParseSDDL(before)
	a, _ := ParseSDDL(after)
	if !SameSID(a.Owner, b.Owner) || a.Protected != b.Protected || len(a.Others()) != len(b.Others()) {
		t.Errorf("after SetSDDL %s reads %s, want %s", dir, after, before)
	}
}
