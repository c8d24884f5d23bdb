package protecttest

import (
	"errors"
	"io/fs"
	"testing"
)

func TestListNamesTheChildrenAsWritten(t *testing.T) {
	list := List(func() map[string]string {
		return map[string]string{`C:\etc\kubeedge`: "O:BAD:P(A;;FA;;;BA)", `C:\etc\kubeedge\config\edgecore.yaml`: "O:SYD:(A;;FA;;;SY)", `c:\ETC\kubeedge\ca.crt`: Inherited}
	})
	got, err := list(`C:\etc\kubeedge`)
	if err != nil || len(got) != 2 {
		t.Fatalf("List = %+v, %v", got, err)
	}
	if got[0].Name != "ca.crt" || got[0].Dir || got[1].Name != "config" || !got[1].Dir || got[1].Security.Owner != "BA" {
		t.Errorf("List = %+v", got)
	}
	if got, err := list(`C:\etc\kubeedge\config`); err != nil || len(got) != 1 || got[0].Security.Owner != "SY" || got[0].Dir {
		t.Errorf("List of config = %+v, %v", got, err)
	}
	if _, err := list(`C:\missing`); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("List of a missing folder = %v", err)
	}
}
