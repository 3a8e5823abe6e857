package elicitation

import (
	"errors"
	"fmt"
)

// Code is a stable, machine-readable error class. Adapters map codes to
// responses once, at the edge: a tool error whose text starts with the code,
// or an HTTP status.
type Code string

// The codes of SPEC §3. CodeInternal is never shown with its cause.
const (
	CodeNotFound        Code = "not_found"
	CodeInvalidArgument Code = "invalid_argument"
	CodeNotDecided      Code = "not_decided"
	CodeExpired         Code = "expired"
	CodeCanceled        Code = "canceled"
	CodeConflict        Code = "conflict"
	CodeForbidden       Code = "forbidden"
	// CodeBusy: a limit of the server (per principal or in all) is full
	// for now; the sentence says which and when to retry.
	CodeBusy     Code = "busy"
	CodeInternal Code = "internal"
)

// String returns the code as text.
func (c Code) String() string { return string(c) }

// Sentinel errors returned (wrapped) by the Store and the Service. Match them
// with errors.Is.
var (
	// ErrNotFound: no request with that id, or one the caller may not see.
	ErrNotFound = errors.New("no elicitation with that id")
	// ErrConflict: the request is no longer in a state that allows the
	// operation (already decided, canceled or consumed), or the id exists.
	ErrConflict = errors.New("the elicitation was already resolved")
	// ErrExpired: the request was still pending at or after its expiresAt.
	ErrExpired = errors.New("the elicitation expired before it was resolved")
	// ErrCanceled: the request was canceled by its creator.
	ErrCanceled = errors.New("the elicitation was canceled")
	// ErrNotDecided: the request is still pending.
	ErrNotDecided = errors.New("the elicitation is still pending; call elicit_await first")
	// ErrForbidden: the caller lacks the capability (a bad review key or token).
	ErrForbidden = errors.New("not allowed")
	// ErrBusy: a limit on what the caller, or everyone, may hold at once
	// is full; retrying later may succeed.
	ErrBusy = errors.New("the server is busy; retry in a few seconds")
	// ErrTooManyPending: the owner of a new request already has its most
	// requests pending at once (Request.MaxPending). The Service answers
	// it as a Busy *Error saying so; it is an ErrBusy.
	ErrTooManyPending = fmt.Errorf("too many pending requests: %w", ErrBusy)
	// ErrRuleNotSaved: Submit recorded the approval, but the standing
	// approval asked for with it could not be stored. The decision stands
	// (Submit returns its state with this error); later requests are
	// asked of a human as before.
	ErrRuleNotSaved = errors.New("the approval is recorded, but the standing approval could not be saved")
)

// Error is an error whose message is safe to show to an agent or a reviewer:
// it describes their input, never the server's internals. Kind, when set, is
// the named sentinel this error is an instance of (for errors.Is).
type Error struct {
	Code    Code
	Message string
	// Field names the input the error is about, when there is one
	// ("message", "options[3].id", "requestedSchema.properties.email").
	Field string
	Kind  error
}

func (e *Error) Error() string { return e.Message }
func (e *Error) Unwrap() error { return e.Kind }

// Busy is an ErrBusy whose sentence says which limit is full and what the
// caller can do.
func Busy(format string, args ...any) *Error {
	return &Error{Code: CodeBusy, Kind: ErrBusy, Message: fmt.Sprintf(format, args...)}
}

func invalid(kind error, field, format string, args ...any) *Error {
	return &Error{Code: CodeInvalidArgument, Field: field, Kind: kind, Message: fmt.Sprintf(format, args...)}
}

// CodeOf classifies err. Unknown errors are CodeInternal.
func CodeOf(err error) Code {
	var e *Error
	switch {
	case err == nil:
		return ""
	case errors.As(err, &e):
		return e.Code
	case errors.Is(err, ErrNotFound):
		return CodeNotFound
	case errors.Is(err, ErrExpired):
		return CodeExpired
	case errors.Is(err, ErrCanceled):
		return CodeCanceled
	case errors.Is(err, ErrNotDecided):
		return CodeNotDecided
	case errors.Is(err, ErrConflict), errors.Is(err, ErrAlreadyApproved), errors.Is(err, ErrAnswerDiffers):
		return CodeConflict
	case errors.Is(err, ErrForbidden):
		return CodeForbidden
	case errors.Is(err, ErrBusy):
		return CodeBusy
	}
	return CodeInternal
}

// PublicMessage is the sentence to show for err: the message of an *Error,
// the fixed sentence of a sentinel, and "internal error" for anything else, so
// that no internal detail reaches a browser or an agent.
func PublicMessage(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Message
	}
	for _, s := range []error{ErrNotFound, ErrExpired, ErrCanceled, ErrNotDecided, ErrConflict, ErrSeatApproved, ErrAlreadyApproved, ErrAnswerDiffers, ErrForbidden, ErrBusy} {
		if errors.Is(err, s) {
			return s.Error()
		}
	}
	return "internal error; the server logged the details"
}
