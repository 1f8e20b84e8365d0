--[[ job_submit.lua: deepshared's guard (JobSubmitPlugins=lua reads it from slurm.conf's directory).

deepshared starts jobs by moving them from 'staging' (State=DOWN) into 'prod' (guaranteed) or 'batch'
(best effort), pinned to the GPUs it chose. A job that reaches those partitions another way runs outside
the tenants' quotas, so only the daemon's identity may put a job there: a submission that names 'prod' or
'batch' (alone or in a list) by anybody else is refused, and so is a change by anybody else of a job's
partition to one of them, or of any field of a job that is in one of them (its GPUs, nodes, priority:
what deepshared chose). Users submit to staging (the default partition) and may change their jobs there.
Slurm's own partition options cannot express this: AllowGroups/AllowAccounts test the job's owner and
account, which a daemon moving a user's job cannot change, and RootOnly makes a user's job in the
partition unrunnable even when root moved it there (reason PartitionConfig, seen on Slurm 22.05.8).

DAEMON_USERS: the accounts deepshared runs as (root, and Debian's SlurmUser 'slurm'); edit for a site
whose daemon runs as another user. PROTECTED: deepshared's g_partition and be_partition. ]]

local DAEMON_USERS = { "root", "slurm" }
local PROTECTED = { prod = true, batch = true }

-- uids of DAEMON_USERS, read once from /etc/passwd (uid 0 always)
local allowed = { [0] = true }
do
   local want = {}
   for _, u in ipairs(DAEMON_USERS) do want[u] = true end
   local f = io.open("/etc/passwd", "r")
   if f then
      for line in f:lines() do
         local name, uid = string.match(line, "^([^:]*):[^:]*:(%d+):")
         if name and want[name] then allowed[tonumber(uid)] = true end
      end
      f:close()
   end
end

-- the first protected name in a comma-separated partition list, or nil
local function protected_in(list)
   if list == nil then return nil end
   for p in string.gmatch(list, "[^,]+") do
      if PROTECTED[p] then return p end
   end
   return nil
end

local function refuse(uid, what)
   slurm.log_info("job_submit/lua: deepshared guard: uid %d refused: %s", uid, what)
   slurm.log_user("deepshared: %s; submit to the staging partition (deepshared starts jobs there)", what)
   return slurm.ESLURM_ACCESS_DENIED or slurm.ERROR
end

function slurm_job_submit(job_desc, part_list, submit_uid)
   if allowed[submit_uid] then return slurm.SUCCESS end
   local p = protected_in(job_desc.partition)
   if p then return refuse(submit_uid, "partition " .. p .. " is reserved to deepshared") end
   return slurm.SUCCESS
end

function slurm_job_modify(job_desc, job_rec, part_list, modify_uid)
   if allowed[modify_uid] then return slurm.SUCCESS end
   local p = protected_in(job_desc.partition)
   if p then return refuse(modify_uid, "partition " .. p .. " is reserved to deepshared") end
   p = protected_in(job_rec.partition)
   if p then return refuse(modify_uid, "job " .. tostring(job_rec.job_id) .. " runs in " .. p ..
                           " as deepshared placed it and cannot be changed") end
   return slurm.SUCCESS
end

slurm.log_info("job_submit/lua: deepshared guard loaded (partitions prod, batch)")
return slurm.SUCCESS
