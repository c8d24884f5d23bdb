package protect

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/kubeedge-windows/edgecore/config"
	"github.com/kubeedge-windows/edgecore/config/ospath"
)

// record is what Host.Record holds: the restricted folders outside the
// layout's roots that are the node's (it made them, or took them over
// empty), each with its identity (acl.Entry.ID), and
// the owner and DACL of each folder that existed before the node
// restricted it. It lives in the kubeedge directory, which only SYSTEM and
// Administrators may change and which every start judges whole: whoever
// could write it would choose the ACL the node gives a folder back.
type record struct {
	Made    []madeFolder `json:"made,omitempty"`
	Changed []changed    `json:"changed,omitempty"`
}

type madeFolder struct {
	Path string `json:"path"`
	ID   string `json:"id"`
}

type changed struct {
	Path string `json:"path"`
	// SDDL is the owner and DACL the folder had (acl.ReadSDDL).
	SDDL string `json:"sddl"`
	// What says what the node kept there, for messages.
	What string `json:"what,omitempty"`
}

func (r record) made(p string) (string, bool) {
	for _, m := range r.Made {
		if ospath.Same(config.Windows, m.Path, p) {
			return m.ID, true
		}
	}
	return "", false
}

func (r record) changedAt(p string) bool {
	for _, c := range r.Changed {
		if ospath.Same(config.Windows, c.Path, p) {
			return true
		}
	}
	return false
}

// readRecord reads Host.Record; a missing file, or none kept, is an empty
// record.
func readRecord(h Host) (record, error) {
	var r record
	if h.Record == "" {
		return r, nil
	}
	if h.ReadFile == nil {
		return r, fmt.Errorf("reading %s: this host cannot read files", h.Record)
	}
	data, err := h.ReadFile(h.Record)
	if errors.Is(err, fs.ErrNotExist) {
		return r, nil
	}
	if err != nil {
		return r, fmt.Errorf("reading the record of the folders edgecore restricted: %w", err)
	}
	if err := json.Unmarshal(data, &r); err != nil {
		return r, fmt.Errorf("%s, the record of the folders edgecore restricted, is not what edgecore writes (%v): "+
			"fix: look at it, then delete it; edgecore then takes no folder for its own that it did not judge again", h.Record, err)
	}
	return r, nil
}

// writeRecord replaces Host.Record with r, making its folder first (the
// kubeedge directory, with the node's descriptor) when it is missing.
func writeRecord(h Host, r record) error {
	goos := config.Windows
	dir := ospath.Dir(goos, h.Record)
	// Not recorded itself: this write is the record.
	quiet := h
	quiet.Record = ""
	if _, err := Create(goos, []Target{{Path: dir, Restrict: true, Own: true}}, dir, quiet); err != nil {
		return err
	}
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	if h.WriteFile == nil {
		return fmt.Errorf("writing %s: this host cannot write files", h.Record)
	}
	if err := h.WriteFile(h.Record, append(data, '\n')); err != nil {
		return fmt.Errorf("recording the folders edgecore restricted: %w", err)
	}
	return nil
}

// markMade records the folder p, which the node just made or took over,
// as the node's; a record that says so already is left as it is.
func markMade(h Host, p string) error {
	id, err := identity(h, p)
	if err != nil {
		return err
	}
	r, err := readRecord(h)
	if err != nil {
		return err
	}
	if have, ok := r.made(p); ok && have == id {
		return nil
	}
	kept := r.Made[:0]
	for _, m := range r.Made {
		if !ospath.Same(config.Windows, m.Path, p) {
			kept = append(kept, m)
		}
	}
	r.Made = append(kept, madeFolder{Path: p, ID: id})
	return writeRecord(h, r)
}

// remember records the owner and DACL of the restricted directory t
// before Enforce changes them, unless the node made it or they are
// recorded already: the first record is what the folder had before the
// node ever changed it.
func remember(h Host, t Target) error {
	if h.Record == "" {
		return nil
	}
	r, err := readRecord(h)
	if err != nil {
		return err
	}
	if r.changedAt(t.Path) {
		return nil
	}
	if id, ok := r.made(t.Path); ok {
		if cur, err := identity(h, t.Path); err == nil && cur == id {
			return nil
		}
	}
	if h.SDDL == nil {
		return fmt.Errorf("reading the owner and access control list of %s: this host cannot", t.Path)
	}
	sddl, err := h.SDDL(t.Path)
	if err != nil {
		return err
	}
	r.Changed = append(r.Changed, changed{Path: t.Path, SDDL: sddl, What: t.What})
	return writeRecord(h, r)
}

// Restored is what RestoreRecorded did with one recorded folder.
type Restored struct {
	Path string
	SDDL string
	// Kept is set when the folder keeps the node's ACL, with why.
	Kept string
}

func (r Restored) String() string {
	if r.Kept == "" {
		return fmt.Sprintf("%s: given back the owner and access control list it had before edgecore restricted it (%s)", r.Path, r.SDDL)
	}
	return fmt.Sprintf("%s keeps the node's access control list (SYSTEM and Administrators only): %s; fix: move what you need out of it, delete the rest, "+
		"then give it its earlier owner and access control list in PowerShell started with \"Run as administrator\": "+
		"`$a = Get-Acl -LiteralPath '%s'; $a.SetSecurityDescriptorSddlForm('%s'); Set-Acl -LiteralPath '%s' -AclObject $a`",
		r.Path, r.Kept, r.Path, r.SDDL, r.Path)
}

// RestoreRecorded gives each folder Host.Record names back the owner and
// DACL it had before the node restricted it, when keep (the targets of
// the configuration now in force, or the folders a reset removes itself)
// no longer holds it: what undoing a configuration does to the folders it
// named. Every start runs it (internal/node), so a ConfigUpdateJob that
// is rolled back and an upgrade rolled back, which both start the node
// again on the configuration they put back, give the folders back; reset
// runs it before it removes the kubeedge directory and the record with it.
//
// A folder that holds entries keeps the node's ACL and stays recorded:
// what the node wrote there (a kubelet root holds the pods' Secrets) would
// become readable to whom the old ACL let in. Restored says so, with the
// command that restores it by hand once it is emptied. A recorded folder
// that is gone is forgotten.
func RestoreRecorded(h Host, keep []Target) ([]Restored, error) {
	goos := config.Windows
	r, err := readRecord(h)
	if err != nil || len(r.Changed) == 0 {
		return nil, err
	}
	var out []Restored
	var errs []error
	var left []changed
	// gone are the folders the node no longer holds: given back, or
	// removed.
	var gone []string
	for _, c := range r.Changed {
		kept := false
		for _, t := range keep {
			kept = kept || (t.Restrict && ospath.Within(goos, t.Path, c.Path))
		}
		if kept {
			left = append(left, c)
			continue
		}
		ok, err := h.Exists(c.Path)
		if err != nil {
			errs = append(errs, err)
			left = append(left, c)
			continue
		}
		if !ok {
			gone = append(gone, c.Path)
			continue
		}
		entries, err := list(h, c.Path)
		if err != nil {
			errs = append(errs, err)
			left = append(left, c)
			continue
		}
		if len(entries) > 0 {
			names := make([]string, 0, 3)
			for i := 0; i < len(entries) && i < 3; i++ {
				names = append(names, entries[i].Name)
			}
			out = append(out, Restored{Path: c.Path, SDDL: c.SDDL,
				Kept: fmt.Sprintf("edgecore no longer uses it, but it holds %d entries (%s) the node may have written, %s among them perhaps, which its earlier ACL would open to others",
					len(entries), strings.Join(names, ", "), "Secrets")})
			left = append(left, c)
			continue
		}
		if h.SetSDDL == nil {
			errs = append(errs, fmt.Errorf("giving %s its access control list back: this host cannot", c.Path))
			left = append(left, c)
			continue
		}
		if err := h.SetSDDL(c.Path, c.SDDL); err != nil {
			errs = append(errs, err)
			left = append(left, c)
			continue
		}
		out = append(out, Restored{Path: c.Path, SDDL: c.SDDL})
		gone = append(gone, c.Path)
	}
	if len(left) != len(r.Changed) {
		r.Changed = left
		made := r.Made[:0]
		for _, m := range r.Made {
			kept := true
			for _, g := range gone {
				kept = kept && !ospath.Same(goos, g, m.Path)
			}
			if kept {
				made = append(made, m)
			}
		}
		r.Made = made
		if err := writeRecord(h, r); err != nil {
			errs = append(errs, err)
		}
	}
	return out, errors.Join(errs...)
}
