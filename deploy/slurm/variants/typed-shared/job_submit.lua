--[[ job_submit.lua, variant typed-shared: deepshared's guard (../../job_submit.lua, the same code) and the
rewrite of requests typed by GPU model (JobSubmitPlugins=lua reads it from slurm.conf's directory).

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
whose daemon runs as another user. PROTECTED: deepshared's g_partition and be_partition.

MODELS: the GPU models of the site's nodes. Their GPUs are typed one per GPU with the model in the name
(gres.conf Type=v100_g0 ... v100_g3) so that deepshared can pin a job to one GPU and share it, and each node
carries its model as a feature (slurm.conf Features=v100). Slurm matches a requested type by its whole name,
so a user's --gres=gpu:v100:2 would match no GPU: it is rewritten at submit (and at a change of a pending
job) into --gres=gpu:2 --constraint=v100, which Slurm honours on those nodes and deepshared reads as a
request typed by model (docs/deepshared.md, GPU sharing on nodes typed by model). A request that names a
model and also a --constraint is refused: deepshared would not know which to honour. ]]

local DAEMON_USERS = { "root", "slurm" }
local PROTECTED = { prod = true, batch = true }
local MODELS = { v100 = true, k80 = true }

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

-- The GRES list with each gpu request typed by a model of MODELS made untyped, and that model (nil when none;
-- false and a reason when the request names two models). Slurm 22.05 writes tres_per_node "gres:gpu:v100:2"
-- (later releases "gres/gpu:v100=2"; both read).
local function untype(tres)
   if tres == nil or tres == "" then return nil end
   local model, out, bad = nil, {}, nil
   for item in string.gmatch(tres, "[^,]+") do
      local pre, ty, sep, n = string.match(item, "^(gres[:/]gpu):([%w_.-]+)([:=])(%d+)$")
      if pre and MODELS[ty] then
         if model and model ~= ty then bad = "asks for GPUs of two models (" .. model .. ", " .. ty .. ")" end
         model = ty
         item = pre .. sep .. n
      end
      out[#out + 1] = item
   end
   if bad then return false, bad end
   return model, table.concat(out, ",")
end

-- Rewrites desc's request typed by model; nil, or an error code after telling the user why.
local function rewrite(desc, uid)
   local model, tres = untype(desc.tres_per_node)
   if model == false then
      slurm.log_user("deepshared: the job %s: ask for one GPU model", tres)
      return slurm.ESLURM_INVALID_GRES or slurm.ERROR
   end
   if not model then return nil end
   if desc.features ~= nil and desc.features ~= "" and desc.features ~= model then
      slurm.log_user("deepshared: --gres=gpu:%s:N with --constraint=%s: give the model once (the constraint is set from it)",
                     model, desc.features)
      return slurm.ESLURM_INVALID_FEATURE or slurm.ERROR
   end
   desc.tres_per_node = tres
   desc.features = model
   slurm.log_info("job_submit/lua: uid %d: a request typed by model %s rewritten to %s --constraint=%s", uid, model,
                  tres, model)
   return nil
end

function slurm_job_submit(job_desc, part_list, submit_uid)
   local rc = rewrite(job_desc, submit_uid)
   if rc then return rc end
   if allowed[submit_uid] then return slurm.SUCCESS end
   local p = protected_in(job_desc.partition)
   if p then return refuse(submit_uid, "partition " .. p .. " is reserved to deepshared") end
   return slurm.SUCCESS
end

function slurm_job_modify(job_desc, job_rec, part_list, modify_uid)
   -- deepshared's own updates name per-GPU types (gpu:v100_g2:1), which are no MODELS: left as they are
   local rc = rewrite(job_desc, modify_uid)
   if rc then return rc end
   if allowed[modify_uid] then return slurm.SUCCESS end
   local p = protected_in(job_desc.partition)
   if p then return refuse(modify_uid, "partition " .. p .. " is reserved to deepshared") end
   p = protected_in(job_rec.partition)
   if p then return refuse(modify_uid, "job " .. tostring(job_rec.job_id) .. " runs in " .. p ..
                           " as deepshared placed it and cannot be changed") end
   return slurm.SUCCESS
end

slurm.log_info("job_submit/lua: deepshared guard loaded (partitions prod, batch; GPU models rewritten)")
return slurm.SUCCESS
