package steps

import (
	"bytes"
	"errors"
	"reflect"
	"testing"
)

func TestUndosRunNewestFirstAndGoOnAfterAFailure(t *testing.T) {
	var ran []string
	var u Undos
	for _, name := range []string{"network", "conf", "record"} {
		name := name
		var err error
		if name == "conf" {
			err = errors.New("file in use")
		}
		u.Push("remove "+name, func() error { ran = append(ran, name); return err })
	}
	var out bytes.Buffer
	err := u.Run(&out)
	if want := []string{"record", "conf", "network"}; !reflect.DeepEqual(ran, want) {
		t.Errorf("undid %v, want %v", ran, want)
	}
	if err == nil || err.Error() != "remove conf: file in use" {
		t.Errorf("error %v, want the one failed undo", err)
	}
	want := "undone: remove record\ncould not undo: remove conf: file in use\nundone: remove network\n"
	if out.String() != want {
		t.Errorf("output:\n%s\nwant:\n%s", out.String(), want)
	}
}

func TestNoUndosDoNothing(t *testing.T) {
	var out bytes.Buffer
	if err := (Undos{}).Run(&out); err != nil || out.Len() != 0 {
		t.Errorf("Run = %v, printed %q", err, out.String())
	}
}
