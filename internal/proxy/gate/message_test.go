package gate

import "testing"

func TestDeclinedMessage(t *testing.T) {
	t.Parallel()
	const head, tail = "The tool rm was not called: the reviewer declined it.", " Do not retry it unchanged; ask the user how to proceed."
	str := func(s string) *string { return &s }
	for _, tc := range []struct {
		comment *string
		want    string
	}{
		{nil, head + tail},
		{str(""), head + tail},
		{str("   "), head + tail},
		{str("use the trash"), head + " Their comment: use the trash." + tail},
		{str(" use the trash \n"), head + " Their comment: use the trash." + tail},
		{str("never!"), head + " Their comment: never!" + tail},
		{str("why?"), head + " Their comment: why?" + tail},
		{str("done."), head + " Their comment: done." + tail},
		{str("non è sicuro"), head + " Their comment: non è sicuro." + tail},
	} {
		if got := declinedMessage("rm", tc.comment); got != tc.want {
			t.Errorf("comment %v:\n got %q\nwant %q", tc.comment, got, tc.want)
		}
	}
}
