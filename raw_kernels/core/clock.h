// The clock of a run: ctrl, a double[CTRL_SIZE] array in device memory that the time-step
// kernels (control.cu's finish_dt, fe/heat.cu's heat_clock) advance and the host reads only
// between graph replays. solvers/backend/clock.py reads these indices from this file.
#pragma once

#define CTRL_T 0       // simulated time
#define CTRL_DT 1      // the last step's dt (0 once t has reached t_stop)
#define CTRL_T_STOP 2  // steps stop here: the next output time or the end time
#define CTRL_STEPS 3   // steps taken
#define CTRL_STATUS 4  // 0 running, 1 non-finite or non-physical state found
#define CTRL_SIZE 8    // doubles of ctrl (the rest unused)
