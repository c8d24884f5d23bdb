package acl

import (
	"fmt"
	"strconv"
	"strings"
)

// Security is an owner and a DACL as read back from a file: what Read
// returns and what the checks judge. It is parsed from SDDL, so that the
// judgement is tested on any build host with the strings Windows prints.
type Security struct {
	// Owner is the owner's SID, as SDDL writes it: an alias for a
	// well-known account (BA, SY) or S-1-5-21-…-1001 for a user.
	Owner string
	// Protected is the P flag: the DACL does not inherit its parent's.
	Protected bool
	ACEs      []ACE
}

// ACE is one access control entry: (type;flags;rights;;;trustee).
type ACE struct {
	Type, Flags, Rights, Trustee string
}

// SIDs that may own and fully control the node's files: the service
// (SYSTEM), the operator (Administrators), and TrustedInstaller, which
// owns C:\ and the Windows directories on current Windows releases.
const (
	SystemSID           = "S-1-5-18"
	AdministratorsSID   = "S-1-5-32-544"
	TrustedInstallerSID = "S-1-5-80-956008885-3418522649-1831038044-1853292631-2271478464"
	// UnixRootSID is how Wine reports a file of the Unix root account it
	// runs on, whose administrator that is.
	UnixRootSID = "S-1-22-1-0"
)

// aliases are SDDL's two-letter names of the SIDs the checks judge, with
// the name an operator knows them by. Windows prints a well-known SID by
// its alias, so both spellings are compared.
var aliases = map[string]struct{ sid, name string }{
	"SY": {SystemSID, `NT AUTHORITY\SYSTEM`},
	"BA": {AdministratorsSID, `BUILTIN\Administrators`},
	"BU": {"S-1-5-32-545", `BUILTIN\Users`},
	"BG": {"S-1-5-32-546", `BUILTIN\Guests`},
	"WD": {"S-1-1-0", "Everyone"},
	"AU": {"S-1-5-11", "Authenticated Users"},
	"IU": {"S-1-5-4", "Interactive"},
	"AN": {"S-1-5-7", "Anonymous"},
	"CO": {"S-1-3-0", "CREATOR OWNER"},
	"OW": {"S-1-3-4", "OWNER RIGHTS"},
	"NS": {"S-1-5-20", "Network Service"},
	"LS": {"S-1-5-19", "Local Service"},
}

// canonicalSID turns an alias into its SID; other strings are returned
// as they are.
func canonicalSID(s string) string {
	if a, ok := aliases[s]; ok {
		return a.sid
	}
	return strings.ToUpper(s)
}

// SID is the SID a trustee of an SDDL string names, S-1-5-11 for AU:
// what icacls takes as *S-1-5-11 whatever the display language, in which
// account names are translated.
func SID(trustee string) string { return canonicalSID(trustee) }

// SameSID reports whether a and b name the same account, whichever of the
// alias or the SID either uses.
func SameSID(a, b string) bool { return a != "" && canonicalSID(a) == canonicalSID(b) }

// TrusteeName is the name an operator knows a SID by, with the SID when
// it is not a well-known one.
func TrusteeName(sid string) string {
	c := canonicalSID(sid)
	for _, a := range aliases {
		if a.sid == c {
			return a.name
		}
	}
	if c == TrustedInstallerSID {
		return `NT SERVICE\TrustedInstaller`
	}
	return sid
}

// Trusted reports whether sid is SYSTEM, Administrators, TrustedInstaller
// or (under Wine) Unix root, or one of extra: the accounts that may own the node's
// files and their parents. extra is for the elevated administrator running
// a command, who owns what they created before elevation mattered (and,
// under Wine, every file).
func Trusted(sid string, extra ...string) bool {
	switch canonicalSID(sid) {
	case SystemSID, AdministratorsSID, TrustedInstallerSID, UnixRootSID:
		return true
	}
	for _, e := range extra {
		if SameSID(sid, e) {
			return true
		}
	}
	return false
}

// ParseSDDL reads the owner and DACL of an SDDL string (O:…G:…D:…S:…, any
// part optional). Parts other than O: and D: are ignored; conditional and
// object ACEs keep their fields as printed.
func ParseSDDL(sddl string) (Security, error) {
	var s Security
	rest := sddl
	for rest != "" {
		if len(rest) < 2 || rest[1] != ':' {
			return s, fmt.Errorf("security descriptor %q: expected O:, G:, D: or S: at %q", sddl, rest)
		}
		part := rest[0]
		rest = rest[2:]
		// A part ends where the next one begins, outside parentheses.
		end, depth := len(rest), 0
		for i := 0; i < len(rest); i++ {
			switch c := rest[i]; {
			case c == '(':
				depth++
			case c == ')':
				depth--
			case depth == 0 && i+1 < len(rest) && rest[i+1] == ':' && strings.IndexByte("OGDS", c) >= 0:
				end = i
			}
			if end != len(rest) {
				break
			}
		}
		body := rest[:end]
		rest = rest[end:]
		switch part {
		case 'O':
			s.Owner = body
		case 'D':
			var err error
			if s.Protected, s.ACEs, err = parseACL(body); err != nil {
				return s, fmt.Errorf("security descriptor %q: %w", sddl, err)
			}
		case 'G', 'S':
		default:
			return s, fmt.Errorf("security descriptor %q: unknown part %c:", sddl, part)
		}
	}
	return s, nil
}

// parseACL reads the flags and ACEs of a D: part.
func parseACL(body string) (protected bool, aces []ACE, err error) {
	i := strings.IndexByte(body, '(')
	if i < 0 {
		i = len(body)
	}
	for flags := body[:i]; flags != ""; {
		switch {
		case strings.HasPrefix(flags, "P"):
			protected, flags = true, flags[1:]
		case strings.HasPrefix(flags, "AI"), strings.HasPrefix(flags, "AR"):
			flags = flags[2:]
		case strings.HasPrefix(flags, "NO_ACCESS_CONTROL"):
			// A null DACL: everyone has every right. Said as an ACE, so
			// that the checks see it like any other grant.
			aces = append(aces, ACE{Type: "A", Rights: "GA", Trustee: "WD"})
			flags = flags[len("NO_ACCESS_CONTROL"):]
		default:
			return false, nil, fmt.Errorf("unknown DACL flag at %q", flags)
		}
	}
	rest := body[i:]
	for rest != "" {
		if rest[0] != '(' {
			return false, nil, fmt.Errorf("expected an ACE in parentheses at %q", rest)
		}
		end := strings.IndexByte(rest, ')')
		if end < 0 {
			return false, nil, fmt.Errorf("unterminated ACE at %q", rest)
		}
		f := strings.Split(rest[1:end], ";")
		if len(f) < 6 {
			return false, nil, fmt.Errorf("ACE %q has %d fields, want 6", rest[:end+1], len(f))
		}
		aces = append(aces, ACE{Type: f[0], Flags: f[1], Rights: f[2], Trustee: f[5]})
		rest = rest[end+1:]
	}
	return protected, aces, nil
}

// flag reports whether the ACE carries the two-letter flag f.
func (a ACE) flag(f string) bool {
	for i := 0; i+2 <= len(a.Flags); i += 2 {
		if a.Flags[i:i+2] == f {
			return true
		}
	}
	return false
}

// InheritOnly reports the IO flag: the ACE applies to children created
// later, not to the object itself.
func (a ACE) InheritOnly() bool { return a.flag("IO") }

// Allows reports whether the ACE grants rather than denies access; an
// object or callback allow ACE grants too.
func (a ACE) Allows() bool {
	switch a.Type {
	case "A", "OA", "XA", "ZA":
		return true
	}
	return false
}

// Access rights as bits of an access mask.
const (
	fileReadData    = 0x1
	fileWriteData   = 0x2 // add a file, in a directory
	fileAppendData  = 0x4 // add a subdirectory, in a directory
	fileDeleteChild = 0x40
	rightDelete     = 0x10000
	rightWriteDAC   = 0x40000
	rightWriteOwner = 0x80000
	genericAll      = 0x10000000
	genericWrite    = 0x40000000
	genericRead     = 0x80000000

	// writeMask is every right that lets a holder change, replace or
	// remove what is in a file or directory, or who may.
	writeMask = fileWriteData | fileAppendData | fileDeleteChild | rightDelete |
		rightWriteDAC | rightWriteOwner | genericAll | genericWrite
	// removeMask lets a holder delete or rename a directory (DELETE),
	// any entry in it whatever the entry's own ACL (FILE_DELETE_CHILD),
	// or give itself either right (WRITE_DAC, WRITE_OWNER). On a parent
	// of a program that is enough to put another program at its path:
	// rename the directory away and create one of the same name. Adding
	// files (FILE_WRITE_DATA) alone is not: nothing existing moves.
	removeMask = fileDeleteChild | rightDelete | rightWriteDAC | rightWriteOwner | genericAll
	// readMask lets a holder read a file's content.
	readMask = fileReadData | genericRead | genericAll
)

// rightBits are SDDL's two-letter access rights.
var rightBits = map[string]uint32{
	"GA": genericAll, "GR": genericRead, "GW": genericWrite, "GX": 0x20000000,
	"RC": 0x20000, "SD": rightDelete, "WD": rightWriteDAC, "WO": rightWriteOwner,
	"CC": 0x1, "DC": 0x2, "LC": 0x4, "SW": 0x8, "RP": 0x10, "WP": 0x20, "DT": 0x40, "LO": 0x80, "CR": 0x100,
	"FA": 0x1F01FF, "FR": 0x120089, "FW": 0x120116, "FX": 0x1200A0,
	"KA": 0xF003F, "KR": 0x20019, "KW": 0x20006, "KX": 0x20019,
}

// Mask is the ACE's access mask. A rights string it cannot read counts as
// every right, so that a check never passes on what it did not
// understand.
func (a ACE) Mask() uint32 {
	r := a.Rights
	if strings.HasPrefix(r, "0x") || strings.HasPrefix(r, "0X") {
		v, err := strconv.ParseUint(r[2:], 16, 32)
		if err != nil {
			return ^uint32(0)
		}
		return uint32(v)
	}
	if len(r)%2 != 0 {
		return ^uint32(0)
	}
	var m uint32
	for i := 0; i < len(r); i += 2 {
		b, ok := rightBits[r[i:i+2]]
		if !ok {
			return ^uint32(0)
		}
		m |= b
	}
	return m
}

// Grant is access an untrusted account has: who, and what it may do.
type Grant struct {
	Trustee string
	Rights  string
	Write   bool
}

func (g Grant) String() string {
	what := "may read or traverse"
	if g.Write {
		what = "may change or delete"
	} else if mask := (ACE{Rights: g.Rights}).Mask(); mask&readMask != 0 {
		what = "may read"
	}
	return fmt.Sprintf("%s %s (%s)", TrusteeName(g.Trustee), what, g.Rights)
}

// Others lists the access the DACL gives to anyone but SYSTEM,
// Administrators, TrustedInstaller and extra, on the object itself (an
// inherit-only ACE reaches only children created later). A CREATOR OWNER
// ACE is always inherit-only, so it never appears.
func (s Security) Others(extra ...string) []Grant {
	var out []Grant
	for _, a := range s.ACEs {
		if !a.Allows() || a.InheritOnly() || Trusted(a.Trustee, extra...) {
			continue
		}
		out = append(out, Grant{Trustee: a.Trustee, Rights: a.Rights, Write: a.Mask()&writeMask != 0})
	}
	return out
}

// Removable lists the access the DACL gives to anyone but SYSTEM,
// Administrators, TrustedInstaller and extra that lets them delete or
// rename the object or its entries (removeMask), on the object itself.
func (s Security) Removable(extra ...string) []Grant {
	var out []Grant
	for _, a := range s.ACEs {
		if !a.Allows() || a.InheritOnly() || Trusted(a.Trustee, extra...) || a.Mask()&removeMask == 0 {
			continue
		}
		out = append(out, Grant{Trustee: a.Trustee, Rights: a.Rights, Write: true})
	}
	return out
}

// Drift lists how s differs from what ApplyTree gives a root with
// DirectorySDDL: Administrators the owner, a protected DACL, access for
// SYSTEM and Administrators only. Empty means nothing to repair.
func (s Security) Drift() []string {
	var d []string
	if !SameSID(s.Owner, "BA") {
		d = append(d, "owned by "+TrusteeName(s.Owner)+", not BUILTIN\\Administrators")
	}
	if !s.Protected {
		d = append(d, "inherits its parent's ACL")
	}
	for _, g := range s.Others() {
		d = append(d, g.String())
	}
	return d
}
