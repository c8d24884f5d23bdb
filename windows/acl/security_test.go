package acl

import (
	"reflect"
	"strings"
	"testing"
)

// What Windows prints for a directory join restricted, for a fresh folder
// in C:\ (owned by the user who made it, inheriting C:\'s ACL), and for a
// file below a restricted root.
const (
	restrictedRoot = "O:BAG:SYD:PAI(A;OICI;FA;;;SY)(A;OICI;FA;;;BA)"
	userFolder     = "O:S-1-5-21-1004336348-1177238915-682003330-1001G:S-1-5-21-1004336348-1177238915-682003330-513" +
		"D:AI(A;ID;FA;;;BA)(A;OICIIOID;GA;;;BA)(A;ID;FA;;;SY)(A;OICIIOID;GA;;;SY)(A;OICIID;0x1200a9;;;BU)" +
		"(A;ID;0x1301bf;;;AU)(A;OICIIOID;SDGXGWGR;;;AU)"
	restrictedChild = "O:BAD:AI(A;ID;FA;;;SY)(A;ID;FA;;;BA)"
	user            = "S-1-5-21-1004336348-1177238915-682003330-1001"
)

func mustParse(t *testing.T, sddl string) Security {
	t.Helper()
	s, err := ParseSDDL(sddl)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestParseSDDLReadsOwnerFlagsAndACEs(t *testing.T) {
	s := mustParse(t, userFolder)
	if s.Owner != user {
		t.Errorf("owner = %q, want %q", s.Owner, user)
	}
	if s.Protected {
		t.Error("AI alone is not protected")
	}
	if len(s.ACEs) != 7 || s.ACEs[4] != (ACE{Type: "A", Flags: "OICIID", Rights: "0x1200a9", Trustee: "BU"}) {
		t.Errorf("ACEs = %+v", s.ACEs)
	}
	r := mustParse(t, restrictedRoot)
	if r.Owner != "BA" || !r.Protected || len(r.ACEs) != 2 {
		t.Errorf("restricted root = %+v", r)
	}
	// Without an O: part, as Describe prints a DACL alone.
	if d := mustParse(t, "D:P(A;;GA;;;SY)"); d.Owner != "" || !d.Protected || len(d.ACEs) != 1 {
		t.Errorf("DACL only = %+v", d)
	}
}

func TestParseSDDLRefusesGarbage(t *testing.T) {
	for _, bad := range []string{"X", "D:(A;;FA;;;SY", "D:(A;;FA)", "D:P junk", "Q:BA"} {
		if _, err := ParseSDDL(bad); err == nil {
			t.Errorf("ParseSDDL(%q) accepted it", bad)
		}
	}
}

func TestDriftOfARestrictedRootIsNone(t *testing.T) {
	if d := mustParse(t, restrictedRoot).Drift(); len(d) != 0 {
		t.Errorf("Drift = %v, want none", d)
	}
}

func TestDriftOfAUserFolderNamesOwnerInheritanceAndReaders(t *testing.T) {
	d := mustParse(t, userFolder).Drift()
	joined := strings.Join(d, "; ")
	for _, want := range []string{
		"owned by " + user,
		"inherits its parent's ACL",
		`BUILTIN\Users may read (0x1200a9)`,
		"Authenticated Users may change or delete (0x1301bf)",
	} {
		if !strings.Contains(joined, want) {
			t.Errorf("Drift = %q, want it to say %q", joined, want)
		}
	}
	// The inherit-only ACE of Authenticated Users reaches only children.
	if strings.Contains(joined, "SDGXGWGR") {
		t.Errorf("Drift = %q names an inherit-only ACE", joined)
	}
}

func TestDriftOfAnOwnerBySIDIsNone(t *testing.T) {
	// Windows may print the owner by SID; it is the same account.
	s := mustParse(t, "O:S-1-5-32-544D:P(A;OICI;FA;;;S-1-5-18)(A;OICI;FA;;;S-1-5-32-544)")
	if d := s.Drift(); len(d) != 0 {
		t.Errorf("Drift = %v, want none", d)
	}
}

func TestDriftSeesAnExplicitEveryoneACEOnAProtectedRoot(t *testing.T) {
	s := mustParse(t, "O:BAD:P(A;OICI;FA;;;SY)(A;OICI;FA;;;BA)(A;;FR;;;WD)")
	if d := s.Drift(); !reflect.DeepEqual(d, []string{"Everyone may read (FR)"}) {
		t.Errorf("Drift = %v", d)
	}
}

func TestANullDACLGrantsEveryoneEverything(t *testing.T) {
	g := mustParse(t, "O:BAD:NO_ACCESS_CONTROL").Others()
	if len(g) != 1 || g[0].Trustee != "WD" || !g[0].Write {
		t.Errorf("Others = %+v, want Everyone with full control", g)
	}
}

func TestRestrictedChildGrantsNoOthers(t *testing.T) {
	if g := mustParse(t, restrictedChild).Others(); len(g) != 0 {
		t.Errorf("Others = %v", g)
	}
}

func TestOthersTrustsExtraAccounts(t *testing.T) {
	s := mustParse(t, "O:BAD:(A;;FA;;;"+user+")")
	if g := s.Others(); len(g) != 1 || !g[0].Write {
		t.Errorf("Others = %+v, want the user's full control counted as write", g)
	}
	if g := s.Others(user); len(g) != 0 {
		t.Errorf("Others(user) = %+v, want none", g)
	}
}

func TestDenyACEsGrantNothing(t *testing.T) {
	s := mustParse(t, "O:BAD:P(D;;FA;;;WD)(A;;FA;;;SY)")
	if g := s.Others(); len(g) != 0 {
		t.Errorf("Others = %+v", g)
	}
}

func TestMask(t *testing.T) {
	for rights, want := range map[string]uint32{
		"FA":       0x1F01FF,
		"0x1301bf": 0x1301bf,
		"SDGXGWGR": rightDelete | 0x20000000 | genericWrite | genericRead,
		"FR":       0x120089,
		"ZZ":       ^uint32(0), // unknown: counted as everything
		"F":        ^uint32(0),
		"0xzz":     ^uint32(0),
	} {
		if got := (ACE{Rights: rights}).Mask(); got != want {
			t.Errorf("Mask(%q) = %#x, want %#x", rights, got, want)
		}
	}
	for rights, write := range map[string]bool{"FR": false, "FX": false, "0x1200a9": false, "FW": true, "SD": true, "WD": true, "GA": true, "0x1301bf": true} {
		if got := (ACE{Rights: rights}).Mask()&writeMask != 0; got != write {
			t.Errorf("%s write = %v, want %v", rights, got, write)
		}
	}
}

func TestTrusted(t *testing.T) {
	for sid, want := range map[string]bool{
		"SY": true, "BA": true, SystemSID: true, AdministratorsSID: true, TrustedInstallerSID: true, UnixRootSID: true, "S-1-22-1-1000": false,
		"BU": false, "WD": false, "AU": false, user: false, "": false,
	} {
		if got := Trusted(sid); got != want {
			t.Errorf("Trusted(%q) = %v, want %v", sid, got, want)
		}
	}
	if !Trusted(user, user) || Trusted("BU", user) {
		t.Error("extra accounts are trusted, and only they")
	}
	if TrusteeName("BU") != `BUILTIN\Users` || TrusteeName(TrustedInstallerSID) != `NT SERVICE\TrustedInstaller` || TrusteeName(user) != user {
		t.Error("TrusteeName")
	}
}

// Removable is what lets another account put its own program where a
// parent directory of edgecore.exe was: delete or rename rights on the
// directory, delete-child rights on it, or the right to grant either.
func TestRemovable(t *testing.T) {
	for sddl, want := range map[string][]string{
		// C:\Program Files: Users read and run.
		"O:BAD:AI(A;OICIID;FA;;;SY)(A;OICIID;FA;;;BA)(A;OICIID;0x1200a9;;;BU)": nil,
		// A folder made in C:\ on Windows 10: Authenticated Users modify,
		// which includes DELETE.
		"O:BAD:AI(A;ID;FA;;;BA)(A;ID;0x1301bf;;;AU)": {"AU"},
		// Create folders and files only: nothing existing can move.
		"O:BAD:AI(A;CI;0x6;;;BU)":             nil,
		"O:BAD:(A;;0x40;;;BU)":                {"BU"}, // delete child
		"O:BAD:(A;;WD;;;WD)":                  {"WD"}, // write DAC
		"O:BAD:(A;;WO;;;IU)":                  {"IU"}, // take ownership
		"O:BAD:(A;;GA;;;BU)":                  {"BU"}, // generic all
		"O:BAD:(A;;SD;;;S-1-5-21-1-2-3-1001)": {"S-1-5-21-1-2-3-1001"},
		// Inherit-only entries reach only children made later; denials
		// grant nothing.
		"O:BAD:(A;OICIIO;FA;;;BU)(D;;FA;;;WD)": nil,
		// The elevated administrator running the command is trusted.
		"O:BAD:(A;;FA;;;S-1-5-21-9-9-9-500)": nil,
		// Rights the check cannot read count as all rights.
		"O:BAD:(A;;ZZ;;;BU)": {"BU"},
		// Wine, for a directory of mode 0777: Everyone may write and
		// delete; for 0755, read and run only.
		"O:S-1-22-1-0D:(A;OICI;FA;;;SY)(A;OICI;0x1f01ff;;;S-1-22-1-0)(A;OICI;0x1301ff;;;WD)": {"WD"},
		"O:S-1-22-1-0D:(A;OICI;FA;;;SY)(A;OICI;0x1f01ff;;;S-1-22-1-0)(A;OICI;0x1200a9;;;WD)": nil,
	} {
		sec, err := ParseSDDL(sddl)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, g := range sec.Removable("S-1-5-21-9-9-9-500") {
			got = append(got, g.Trustee)
		}
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("%s: Removable = %v, want %v", sddl, got, want)
		}
	}
}

// icacls takes the SIDs of the fixes, which no display language
// translates.
func TestSID(t *testing.T) {
	for trustee, want := range map[string]string{"AU": "S-1-5-11", "BU": "S-1-5-32-545", "S-1-5-21-1-2-3-1001": "S-1-5-21-1-2-3-1001", "s-1-5-11": "S-1-5-11"} {
		if got := SID(trustee); got != want {
			t.Errorf("SID(%q) = %q, want %q", trustee, got, want)
		}
	}
}
