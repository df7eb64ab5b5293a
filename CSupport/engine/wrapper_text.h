// Functions that stand between the program's code and the call it made: the
// in-process wait wrappers and the pool's job trampolines. They are on the
// program's stacks but are not its work, so the report leaves their frames
// out, as it leaves out the whole preload agent. They share one section so
// that its bounds (hw_wrapper_text_range) are the one range to leave out.
#ifndef HANGWATCH_WRAPPER_TEXT_H
#define HANGWATCH_WRAPPER_TEXT_H

#define HW_WRAPPER_TEXT __attribute__((section("hw_wrapper_text")))

#endif
