package pipe

import "testing"

// The refusal names the squatting process and the fix, or says why its id
// is missing.
func TestSquattedErrorSaysWhoAndWhat(t *testing.T) {
	for _, tc := range []struct {
		err  SquattedError
		want string
	}{
		{SquattedError{Pipe: `\\.\pipe\edgecore-kubelet`, PID: 4242},
			`the pipe \\.\pipe\edgecore-kubelet is already served by process 4242, so it was not created: whoever made it first chooses its access list and would answer clients meant for edgecore; ` +
				`fix: find what runs as process 4242 (Get-Process -Id 4242 | Format-List Path,UserName in an elevated PowerShell), stop it, and start edgecore again`},
		{SquattedError{Pipe: `\\.\pipe\edgecore-dmi`, Why: "Access is denied."},
			`the pipe \\.\pipe\edgecore-dmi is already served by another process (its process id could not be read: Access is denied.), so it was not created: ` +
				`whoever made it first chooses its access list and would answer clients meant for edgecore; ` +
				`fix: find the program holding the pipe (Get-ChildItem \\.\pipe\ lists the names; Sysinternals' handle.exe -a names the process), stop it, and start edgecore again`},
	} {
		if got := tc.err.Error(); got != tc.want {
			t.Errorf("got  %s\nwant %s", got, tc.want)
		}
	}
}
