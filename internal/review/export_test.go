package review

// What the external tests reach inside: to mint a batch token that step 1
// would never give (one naming a request the reviewer may not decide), so
// that step 2's own check is tested, and the inbox forms' tokens that the
// inbox would never give (another reviewer's, another target's).
var (
	BatchSubject  = batchSubject
	FormSubject   = formSubject
	TokenReviewer = tokenReviewer
)
